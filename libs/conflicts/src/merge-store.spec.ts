import { describe } from 'vitest';
import { mergeStoreAcceptance } from '../test/merge-store.acceptance';
import { InMemoryMergeStore } from './merge-store';

describe('InMemoryMergeStore', () => {
  mergeStoreAcceptance(async (body) => body(new InMemoryMergeStore()));
});
