import { LogConsumer } from '../src';
import { derivedStateHandler } from './derived-state';

// A consumer-group member in a process of its own, for the crash and lease tests.
// Settings come as arguments: <database url> <group> <partitions> <batch size> [partitions per batch].
const [url, group, partitions, batchSize, partitionsPerBatch] = process.argv.slice(2);
if (!url || !group || !partitions || !batchSize) {
  console.error('usage: consumer-child <url> <group> <partitions> <batchSize> [partitionsPerBatch]');
  process.exit(2);
}

const consumer = new LogConsumer({
  connection: url,
  group,
  partitions: Number(partitions),
  batchSize: Number(batchSize),
  partitionsPerBatch: Number(partitionsPerBatch ?? 1),
  handler: derivedStateHandler,
  pollMs: 50,
  rebalanceMs: 100,
  onError: (error) => console.error('consumer error', error),
});

consumer
  .start()
  .then(() => process.stdout.write('ready\n'))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });

process.on('SIGTERM', () => {
  void consumer.stop().then(() => process.exit(0));
});
