// A reader in its own process (bench/lib/drain.ts starts it): attaches to DRAIN_URL with the
// bearer DRAIN_TOKEN, joins as controller on the binary subprotocol, discards the output and
// prints `bytes <n>` every 100 ms. Figure 10's flood is read here, so the bench process that times
// the other session's echo does not also spend its event loop on the flood.
import { BenchClient } from './client.ts';

const c = await BenchClient.connect(process.env.DRAIN_URL!, process.env.DRAIN_TOKEN!, true);
c.hashing = false;
await c.join('controller');
console.log('joined');
setInterval(() => console.log(`bytes ${c.bytes} ${c.lastByteAt ? (performance.now() - c.lastByteAt).toFixed(0) : -1}`), 100);
process.on('SIGTERM', () => {
  c.close();
  process.exit(0);
});
// The bench closing its end of stdin (it died) ends this reader too.
process.stdin.on('end', () => process.exit(0)).resume();
