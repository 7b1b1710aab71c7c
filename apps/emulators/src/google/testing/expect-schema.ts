import { expect } from 'vitest';
import { googleDiscoveryValidator } from './discovery-schema';

/** Asserts that an emulator response is a valid `schemaId` of the published discovery document. */
export function expectSchema(api: 'calendar' | 'gmail' | 'tasks', schemaId: string, data: unknown): void {
  expect(googleDiscoveryValidator().errors(api, schemaId, data)).toEqual([]);
}
