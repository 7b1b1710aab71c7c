/**
 * Measures what documents really hold in memory, for `memory-estimate.spec.ts`: Automerge's
 * WebAssembly memory plus the JavaScript heap and array buffers, after a full collection, before and after
 * making `docs` documents of `changes` changes each — merged one by one (`applied`: as the
 * document holds them, deferred; `flushed`: then read through Automerge, which applies
 * them), or saved and then loaded. Runs in a process of its own (`node --expose-gc`), so Automerge's memory starts
 * empty. Prints one JSON line: measured and estimated bytes per document.
 */
// Caught before Automerge loads (a require, not a hoisted import, keeps the order).
const { automergeMemoryBytes } = require('./wasm-memory') as typeof import('./wasm-memory');

// Loaded after the hook, so Automerge instantiates through it.
const { EntityDocument } = require('../src/entity-document') as typeof import('../src/entity-document');
type EntityDocument = import('../src/entity-document').EntityDocument;

const [mode = 'applied', docsArg = '300', changesArg = '50'] = process.argv.slice(2);
const docs = Number(docsArg);
const changes = Number(changesArg);
const exposed = (globalThis as { gc?: () => void }).gc;
if (exposed === undefined) throw new Error('run with --expose-gc');
const collect: () => void = exposed;
if (mode !== 'applied' && mode !== 'flushed' && mode !== 'loaded')
  throw new Error(`mode ${mode}: applied, flushed or loaded`);

const fields = ['stage', 'owner', 'amount', 'closeDate', 'name', 'pipeline', 'priority', 'nextStep'];
const connections = ['0190a000-0000-7000-8000-000000000001', '0190a000-0000-7000-8000-000000000002'];
const entityId = (d: number) => `0190b000-0000-7000-8000-${d.toString(16).padStart(12, '0')}`;

function build(d: number): EntityDocument {
  const doc = EntityDocument.create(entityId(d));
  for (let c = 0; c < changes; c++)
    doc.applyInbound(
      {
        entityId: entityId(d),
        workspaceId: '0190a000-0000-7000-8000-0000000000ff',
        entityType: 'deal',
        source: { kind: 'connection', id: connections[c % 2]! },
        eventKey: `${d}:${c}`,
        eventTime: new Date(1_790_000_000_000 + c * 1000),
        fields: { [fields[c % fields.length]!]: `value ${c} of ${d}` },
      },
      {},
    );
  // A read through Automerge applies the changes the document deferred.
  if (mode === 'flushed') doc.valueAt(doc.getHeads(), {});
  return doc;
}

const used = () => {
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return automergeMemoryBytes() + heapUsed + arrayBuffers;
};

// Automerge instantiates on first use; one throwaway document does it before the baseline.
build(-1).free();
const kept: EntityDocument[] = [];
let before: number;
if (mode !== 'loaded') {
  before = used();
  for (let d = 0; d < docs; d++) kept.push(build(d));
} else {
  const saved: Uint8Array[] = [];
  for (let d = 0; d < docs; d++) {
    const doc = build(d);
    saved.push(doc.save());
    doc.free();
  }
  before = used();
  for (let d = 0; d < docs; d++) kept.push(EntityDocument.load(entityId(d), saved[d]!, []));
}
const measured = (used() - before) / docs;
const estimated = kept.reduce((n, doc) => n + doc.memoryBytes(), 0) / docs;
console.log(
  JSON.stringify({ mode, docs, changes, measured: Math.round(measured), estimated: Math.round(estimated) }),
);
