import { DataTable, type DataTableColumn } from 'mantine-datatable';
import { useEffect, useState } from 'react';

const PAGE_SIZE = 25;

/**
 * One list of the report, a page at a time (the report holds up to hundreds of rows per list;
 * a page keeps the table quick to draw and to scroll on a phone).
 */
export function PagedTable<T>({
  label,
  records,
  columns,
  idOf,
}: {
  label: string;
  records: readonly T[];
  columns: DataTableColumn<T>[];
  idOf: (row: T) => string;
}) {
  const [page, setPage] = useState(1);
  const pages = Math.max(1, Math.ceil(records.length / PAGE_SIZE));
  // A refresh may shorten the list under the reader.
  useEffect(() => {
    if (page > pages) setPage(pages);
  }, [page, pages]);
  const shown = records.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const paged = records.length > PAGE_SIZE;
  const common = {
    'aria-label': label,
    withTableBorder: true,
    borderRadius: 'md',
    striped: true,
    columns,
    idAccessor: (row: T) => idOf(row),
    // A table wider than a phone scrolls: the keyboard can reach it too.
    scrollAreaProps: { viewportProps: { tabIndex: 0 } },
  } as const;
  if (!paged) return <DataTable<T> {...common} records={records as T[]} />;
  return (
    <DataTable<T>
      {...common}
      records={shown as T[]}
      totalRecords={records.length}
      recordsPerPage={PAGE_SIZE}
      page={page}
      onPageChange={setPage}
      paginationText={({ from, to, totalRecords }) => `${from}–${to} of ${totalRecords}`}
      getPaginationControlProps={(control) =>
        control === 'previous'
          ? { 'aria-label': `${label}: previous page` }
          : control === 'next'
            ? { 'aria-label': `${label}: next page` }
            : {}
      }
    />
  );
}
