-- wrk script: GET the 10 nearest incidents to a random point in Germany (the spatial-anchors
-- bounding box), and report p50/p99 latency and requests/s as one JSON line at the end.
--
-- THINK_MS=t (environment): each connection waits a random time, t ms on average (exponential),
-- before each next request, so the server is asked less than it can answer (paced.sh). Unset,
-- every connection asks again as soon as it has its answer: the server runs flat out.
local lat_min, lat_max, lon_min, lon_max = 47.27, 55.06, 5.87, 15.04
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("seed", 1000 + counter)
end

function init(args)
  math.randomseed(seed)
end

local think_ms = tonumber(os.getenv("THINK_MS") or "")
if think_ms and think_ms > 0 then
  -- Defined only when pacing: wrk then sends each request from a timer instead of at once.
  function delay()
    return -math.log(1 - math.random()) * think_ms
  end
end

function request()
  local lat = lat_min + math.random() * (lat_max - lat_min)
  local lon = lon_min + math.random() * (lon_max - lon_min)
  return wrk.format("GET", string.format("/collections/incidents/items?lat=%.6f&lon=%.6f&nearest=10&limit=10", lat, lon))
end

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout
  -- The spread as well as the tail (p10, p90, p99.9, mean, standard deviation): whether a p99
  -- comes from a few slow requests or from a wide spread of all of them.
  io.write(string.format('{"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,"errors":%d,"non2xx":%d,' ..
    '"p10_ms":%.3f,"p90_ms":%.3f,"p999_ms":%.3f,"mean_ms":%.3f,"sd_ms":%.3f}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000, errors, summary.errors.status,
    latency:percentile(10) / 1000, latency:percentile(90) / 1000, latency:percentile(99.9) / 1000, latency.mean / 1000, latency.stdev / 1000))
end
