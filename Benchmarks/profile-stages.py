#!/usr/bin/env python3
"""Where an ingest's CPU time goes, by thread and by stage, from `perf script` output.

    perf record -e cpu-clock -F 999 -g -o perf.data .build/release/trafficgeo ingest --quiet --no-geocode \
        --format csv --source-name anchors --db /tmp/p.sqlite /tmp/trafficgeo-ab/points.csv
    perf script -i perf.data -F tid,ip,sym > perf.script
    python3 Benchmarks/profile-stages.py perf.script

A sample is filed under the first stage whose function is on its stack (the stages below, in
order); libsqlite3 has no frame pointers, so a sample inside SQLite shows no caller and is filed
under its top frame. docs/benchmarks.md ("The 1M build, profiled") has a run's table."""
import re,collections,sys
stages=[('R-tree bulk load (RTreeBulkLoader)','RTreeBulkLoader'),('events: merging reports (EventMerger, EventRows)','EventMerger|EventRows|Conflat'),
('rows written in curve order (CurveOrderedInserter)','CurveOrderedInserter'),('flush other (IncidentWriter.flush)','IncidentWriterC5flush'),
('snapshot ending','SnapshotEnding'),('rows collected and keyed (PendingInserts: values, Hilbert key, hash)','PendingInserts'),
('row values (IncidentRowLayout)','IncidentRowLayout'),('upsert other (IncidentWriter.upsert)','IncidentWriterC6upsert'),
('finish writes other','finishWrites'),
('CSV records (CSVRecordReader)','CSVRecordReader'),('incident built from fields (EntryFields)','EntryFields'),('CSV reader other','CSVFeedReader'),
('read-ahead hand-over (ReadAhead)','ReadAhead'),('ingest run other','IngestRun'),('store open/schema','StoreSchema|openDatabase|migrat'),]
stages=[(n,re.compile(k)) for n,k in stages]
by=collections.defaultdict(collections.Counter); tot=collections.Counter()
cur=None; frames=[]
def flush():
    if cur is None: return
    chain=' '.join(frames)
    for name,key in stages:
        if key.search(chain): by[cur][name]+=1; break
    else:
        top=frames[0] if frames else '?'
        by[cur]['(no stage in the stack) top: '+('sqlite3' if top.startswith('sqlite3') else top[:40])]+=1
    tot[cur]+=1
for line in open(sys.argv[1]):
    if line.strip()=='': continue
    if not line[0].isspace():
        flush(); cur=line.split()[0]; frames=[]
    else:
        parts=line.split(None,1)
        frames.append(parts[1].strip() if len(parts)==2 else '?')
flush()
T=sum(tot.values())
for tid,c in sorted(tot.items(), key=lambda x:-x[1])[:2]:
    print(f"thread {tid}: {c} samples, {100*c/T:.1f}% of all")
    for name,n in by[tid].most_common(12): print(f"   {100*n/T:5.1f}%  {name}")
