-- Record search: the words of the search text (its runs of letters and digits), so that a
-- search of several words finds its candidates by word prefix before the substring test
-- (RecordsRepository.list). The trigram index alone reads every row that shares a trigram
-- with the text: for an address like "ada.lovelace.12345" that is most of the workspace.
-- Written exactly as SEARCH_WORDS in records.repository.ts.
CREATE INDEX "entity_search_words_idx" ON "entity" USING gin (
  (array_to_tsvector(array_remove(regexp_split_to_array(
    lower(coalesce(display_name, '') || ' ' || coalesce(fields->>'email', '') || ' ' || coalesce(fields->>'domain', '')),
    '[^[:alnum:]]+'), '')))
);
