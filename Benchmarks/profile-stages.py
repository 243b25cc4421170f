#!/usr/bin/env python3
"""Where an ingest's CPU time goes, by thread and by stage, from `perf script` output.

    perf record -e cpu-clock -F 999 -g -o perf.data .build/release/trafficgeo ingest --quiet --no-geocode \
        --format csv --source-name anchors --db /tmp/p.sqlite /tmp/trafficgeo-ab/points.csv
    perf script -i perf.data -F tid,time,ip,sym > perf.script
    python3 Benchmarks/profile-stages.py perf.script

With sample times (`-F tid,time,ip,sym`; `-F tid,ip,sym` gives the tables without), it also
prints when each thread ran and the busiest thread's stages once the others had stopped (the
ingest's tail: the feed is read, and the writer stores what it holds, alone).

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
samples=[]  # (thread, time or None, stage)
cur=None; when=None; frames=[]
def flush():
    if cur is None: return
    chain=' '.join(frames)
    for name,key in stages:
        if key.search(chain): stage=name; break
    else:
        top=frames[0] if frames else '?'
        stage='(no stage in the stack) top: '+('sqlite3' if top.startswith('sqlite3') else top[:40])
    samples.append((cur,when,stage))
for line in open(sys.argv[1]):
    if line.strip()=='': continue
    # A sample's first line is "tid [time:]" (indented by some perf versions); its frames follow.
    if not line[0].isspace() or re.match(r'\s*\d+(\s+[\d.]+:)?\s*$', line):
        flush(); head=line.split(); cur=head[0]; frames=[]
        when=float(head[1].rstrip(':')) if len(head)>1 else None
    else:
        parts=line.split(None,1)
        frames.append(parts[1].strip() if len(parts)==2 else '?')
flush()

def table(chosen, title):
    by=collections.defaultdict(collections.Counter); tot=collections.Counter()
    for tid,_,stage in chosen: by[tid][stage]+=1; tot[tid]+=1
    T=sum(tot.values())
    if title: print(title)
    for tid,c in sorted(tot.items(), key=lambda x:-x[1])[:4]:
        print(f"thread {tid}: {c} samples, {100*c/T:.1f}% of all")
        for name,n in by[tid].most_common(12): print(f"   {100*n/T:5.1f}%  {name}")
    return tot

tot=table(samples, None)
if samples and samples[0][1] is not None:
    t0=min(t for _,t,_ in samples)
    span={}
    for tid,t,_ in samples: a,b=span.get(tid,(t,t)); span[tid]=(min(a,t),max(b,t))
    busy=[tid for tid,c in tot.most_common() if c>=100]
    print("\nwhen each thread ran (seconds from the first sample):")
    for tid in busy: print(f"   thread {tid}: {span[tid][0]-t0:6.2f} to {span[tid][1]-t0:6.2f}, {tot[tid]} samples")
    if len(busy)>1:
        alone=max(span[tid][1] for tid in busy[1:])
        print()
        table([x for x in samples if x[0]==busy[0] and x[1]>alone],
              f"thread {busy[0]} alone, after {alone-t0:.2f} s (the others had stopped):")
