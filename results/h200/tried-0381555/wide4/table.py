import csv,sys,statistics as st,collections
rows=[]
for f in sys.argv[1:]:
    rows+=list(csv.DictReader(open(f)))
d=collections.defaultdict(list)
for r in rows:
    if r['status']!='ok': continue
    name=r['impl']+('/'+r['tuning'].split('delta.variant=')[1].split(',')[0] if 'delta.variant=' in r['tuning'] else '')
    if r['impl']=='linstate' and r['state_layout']!='kv': continue
    d[(r['op'],r['model'][:5],int(r['batch']),int(r['draft_tokens']),name)].append(float(r['time_us_median']))
cases=sorted(set(k[:4] for k in d))
for c in cases:
    a=d.get(c+('linstate/auto',)); w=d.get(c+('linstate/wide4',))
    peers={k[4]:st.median(v) for k,v in d.items() if k[:4]==c and not k[4].startswith('linstate')}
    bp=min(peers.items(),key=lambda x:x[1]) if peers else ('-',float('nan'))
    am=st.median(a) if a else float('nan'); wm=st.median(w) if w else float('nan')
    print(f"{c[0]:12s} {c[1]} B={c[2]:3d} T={c[3]} auto {am:8.2f} wide4 {wm:8.2f} w/a {wm/am:.3f}  best {bp[0]:10s} {bp[1]:8.2f} auto/best {am/bp[1]:.3f} wide4/best {wm/bp[1]:.3f}")
