/**
 * Indexes on expressions, and partial indexes, which schema.prisma cannot declare: the
 * migrations create them and the schema test checks they exist instead of comparing them with
 * the Prisma schema.
 */
export const EXPRESSION_INDEXES = [
  { table: 'entity', name: 'entity_email_lower_idx' },
  { table: 'entity', name: 'entity_domain_lower_idx' },
  { table: 'entity', name: 'entity_owner_idx' },
  { table: 'entity', name: 'entity_search_trgm_idx' },
  { table: 'entity', name: 'entity_search_words_idx' },
  { table: 'entity', name: 'entity_name_lower_idx' },
  { table: 'match_key', name: 'match_key_email_host_idx' },
  { table: 'outbox', name: 'outbox_pending_entity_idx' },
  { table: 'outbox', name: 'outbox_sent_entity_idx' },
  { table: 'identity_operation', name: 'identity_operation_undone_pair_idx' },
] as const;
