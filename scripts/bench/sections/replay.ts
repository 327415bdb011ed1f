import { type BenchRun, progress } from '../bench-run.js';
import { measureLogSpeed } from '../log-speed.js';
import { ratio } from '../report.js';

export async function benchReplay(bench: BenchRun): Promise<void> {
  const speed = await measureLogSpeed(bench.options.events, progress);
  bench.report.log = speed;
  const scan = { what: 'raw scan (SELECT … ORDER BY position + JSON.parse)', value: speed.raw_scan_events_per_s };
  bench.add({
    key: 'log.replay',
    what: `replay of ${speed.events.toLocaleString('en-US')} events (npm run replay)`,
    value: speed.replay_events_per_s,
    unit: 'events/s',
    compared_with: scan,
    ratio: ratio(speed.replay_events_per_s, speed.raw_scan_events_per_s),
    target: '≥ 0.5×',
  });
  bench.add({
    key: 'log.replay_rss',
    what: `replay peak RSS (${speed.events.toLocaleString('en-US')} events)`,
    value: speed.replay_peak_rss_mb,
    unit: 'MB',
    target: '< 300 MB at 1M events',
  });
  bench.add({
    key: 'log.export',
    what: `export of the same log (npm run export-events, NDJSON)`,
    value: speed.export_events_per_s,
    unit: 'events/s',
    compared_with: scan,
    ratio: ratio(speed.export_events_per_s, speed.raw_scan_events_per_s),
    target: '≥ 0.8×',
  });
  bench.add({
    key: 'log.generate',
    what: 'npm run generate-events',
    value: speed.generate_events_per_s,
    unit: 'events/s',
    target: '1M events in < 60 s (≥ 16,667 events/s)',
  });
}
