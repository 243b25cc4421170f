-- pgbench script: PostGIS answering the exact 10 nearest (the spatial-anchors harness's q1_cand20:
-- 20 candidates by the <-> index order, re-ranked by the spheroidal distance) at a random point
-- in the same bounding box as Benchmarks/serve/nearest.lua.
\set la random(4727000, 5506000)
\set lo random(587000, 1504000)
SELECT id, d FROM (SELECT id, ST_Distance(geog, ST_SetSRID(ST_MakePoint(:lo / 100000.0, :la / 100000.0), 4326)::geography) AS d
  FROM pts ORDER BY geog <-> ST_SetSRID(ST_MakePoint(:lo / 100000.0, :la / 100000.0), 4326)::geography LIMIT 20) s ORDER BY d LIMIT 10;
