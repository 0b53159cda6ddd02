import json
a = json.load(open('/work/runs/s31/dev78-head86.json')); b = json.load(open('/work/runs/s31/devrest-a72.json'))
assert len(a['rows']) == 78 and len(b['rows']) == 130, (len(a['rows']), len(b['rows']))
b['rows'] = a['rows'] + b['rows']
json.dump(b, open('/work/runs/s31/intel-dev208.json', 'w'))
print('merged', len(b['rows']), 'devrest median', b.get('median_seconds'), 'calls', b.get('llm_calls'))
