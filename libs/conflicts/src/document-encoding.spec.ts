import { describe, expect, it } from 'vitest';
import { CRM_A, CRM_B, change, ENTITY, T0, USER } from '../test/fixtures';
import { EntityDocument } from './entity-document';

const at = (s: number) => new Date(T0 + s * 1000);

/** A small document built the same way every time: actors, times, event keys and deps are fixed. */
function build() {
  const doc = EntityDocument.create(ENTITY);
  const chunks = [
    doc.applyInbound(change(CRM_A, 1, { stage: 'won', amount: 1200 }, { eventKey: 'a:1' }), {}).chunk,
    // Concurrent with A's (B has seen nothing): a conflict on stage, settled by lww.
    doc.applyInbound(change(CRM_B, 2, { stage: 'lost', owner: 'Zoë' }, { eventKey: 'b:2' }), {}).chunk,
    doc.applyInbound(
      {
        ...change(CRM_A, 3, { emails: ['ada@a.example'], owner: null }),
        source: { kind: 'user', id: USER },
        eventKey: 'user:3',
      },
      {},
    ).chunk,
  ];
  return { doc, chunks };
}

const hex = (bytes: Uint8Array | null) => Buffer.from(bytes ?? []).toString('hex');
const UPGRADE =
  'Automerge encodes entity documents differently from the bytes stored in entity_doc.doc and ' +
  'entity_doc_change.chunk. Before taking this Automerge version: it must still load the pinned bytes ' +
  '(the load test), and if change hashes or heads move (entity.heads, entity_synced_heads, outbox and ' +
  'write_receipt heads name them) stored documents need a migration (load and save each one, and ' +
  'rewrite the heads that name their changes); then pin the new bytes here.';

// Pinned with @automerge/automerge 3.5.0.
const PINNED_CHANGES = [
  '856f4a837949d42801630011010190a00000007000800000000000000a0101a1efafd80603613a310006150e34014202' +
    '5605571f70027e05737461676506616d6f756e740202017e8602f6016933767a6930303777677c22776f6e226933767a' +
    '6930303777677c313230300200',
  '856f4a83cce41e8101630011010190a00000007000800000000000000b0101a2efafd80603623a320006150d34014202' +
    '5603572270027e057374616765056f776e65720202010296026933767a69306d3630777c226c6f7374226933767a6930' +
    '6d3630777c225a6fc3ab220200',
  '856f4a837607c3c801cd01027949d428100197bd74a7b4e350ce069ac5e9c6b78bdae17a349f9753edea3583cce41e81' +
    'b4583632fac4bbc4d3eb34c885c93273bba801573f0561d843f2f1cd11020190a0000000700080000000000000f10103' +
    'a3efafd80606757365723a330111010190a00000007000800000000000000b08150e340142025605572b700371027302' +
    '7e06656d61696c73056f776e65720202017ec603f6016933767a6931383435637c5b2261646140612e6578616d706c65' +
    '225d6933767a6931383435637c6e756c6c7e00017f017f02',
];
const PINNED_SNAPSHOT =
  '856f4a830070b8bc00e0020311010190a00000007000800000000000000a11010190a00000007000800000000000000b' +
  '11020190a0000000700080000000000000f1017607c3c8b24b4784098b86b85d0bde5df8cc10142f5f8ce58bee1a259d' +
  '2912fd08010403041304230835104004430356020a151d2107230734014202560d576c8001068101028301027d000102' +
  '7f0102007d0200027fa1efafd80602017d03613a3103623a3206757365723a3302007f027e000103077e06616d6f756e' +
  '7406656d61696c7302056f776e6572020573746167657a0002010200017a02017f027d000606017af601c6039602f601' +
  '860296026933767a6930303777677c313230306933767a6931383435637c5b2261646140612e6578616d706c65225d69' +
  '33767a69306d3630777c225a6fc3ab226933767a6931383435637c6e756c6c6933767a6930303777677c22776f6e2269' +
  '33767a69306d3630777c226c6f73742202007f0103007f027f0402';

describe('entity document encoding (pinned bytes)', () => {
  it('encodes changes and snapshots byte for byte as pinned', () => {
    const { doc, chunks } = build();
    expect(chunks.map(hex), UPGRADE).toEqual(PINNED_CHANGES);
    expect(hex(doc.save()), UPGRADE).toBe(PINNED_SNAPSHOT);
  });

  it('loads the pinned bytes into the expected values, conflicts and history', () => {
    const fromChanges = EntityDocument.load(
      ENTITY,
      null,
      PINNED_CHANGES.map((h) => Buffer.from(h, 'hex')),
    );
    const fromSnapshot = EntityDocument.load(ENTITY, Buffer.from(PINNED_SNAPSHOT, 'hex'), []);
    for (const doc of [fromChanges, fromSnapshot]) {
      const { values, provenance } = doc.state({});
      expect(values, UPGRADE).toEqual({
        stage: 'lost',
        amount: 1200,
        owner: null,
        emails: ['ada@a.example'],
      });
      expect(provenance.stage, UPGRADE).toEqual({
        source: { kind: 'connection', id: CRM_B },
        eventTime: at(2),
        conflicted: false,
      });
      expect(provenance.emails?.source, UPGRADE).toEqual({ kind: 'user', id: USER });
      expect(doc.standingConflictIds(), UPGRADE).toHaveLength(1);
      expect(
        doc.history().map((h) => [h.eventKey, h.source.id, Object.keys(h.fields).sort()]),
        UPGRADE,
      ).toEqual([
        ['a:1', CRM_A, ['amount', 'stage']],
        ['b:2', CRM_B, ['owner', 'stage']],
        ['user:3', USER, ['emails', 'owner']],
      ]);
    }
    expect(fromSnapshot.getHeads(), UPGRADE).toEqual(fromChanges.getHeads());
    expect(fromSnapshot.getHeads(), UPGRADE).toEqual(build().doc.getHeads());
    expect(fromSnapshot.getHeads(), UPGRADE).toEqual([
      '7607c3c8b24b4784098b86b85d0bde5df8cc10142f5f8ce58bee1a259d2912fd',
    ]);
  });
});
