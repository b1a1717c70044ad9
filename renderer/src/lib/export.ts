/**
 * The query log's export, made from exactly the rows the screen counts
 * (issue 14, item 6): the same filter, the same pause point, the same
 * records the page holds, newest first, with resolver names. (The proxy's
 * own /api/queries/export reads the proxy's log, which may hold fewer
 * records than the page; its CSV has the same columns, from the same
 * module: proxy/control/api-client/query-export.ts.)
 */
import type { QueryRecord, ResolverView } from '../../../proxy/control/api-types.js';
import type { FilteredIndex } from './filters.js';
import { csvHeader, csvLine, exportRow } from '../../../proxy/control/api-client/query-export.js';
import { resolverLabel } from './query-row.js';
import type { RingBuffer } from './ring.js';

/** The records counted on screen: match numbers start…end-1 of the index, newest first. */
export function* shownRecords(index: Pick<FilteredIndex, 'start' | 'absoluteAt'>, end: number, ring: Pick<RingBuffer<QueryRecord>, 'atAbsolute'>): Generator<QueryRecord> {
  for (let k = end - 1; k >= index.start; k--) {
    const a = index.absoluteAt(k);
    const r = a === undefined ? undefined : ring.atAbsolute(a);
    if (r) yield r;
  }
}

/** A resolver's name from the list the page holds (its id when the list doesn't know it). */
const labelFrom = (resolvers: readonly Pick<ResolverView, 'id' | 'label'>[] | undefined) => (id: string): string => resolverLabel(resolvers, id);

/** The CSV file: a header line, then one line per record, CRLF line ends (the proxy's own export writes the same). */
export function toCsv(records: Iterable<QueryRecord>, resolvers: readonly Pick<ResolverView, 'id' | 'label'>[] | undefined): string {
  const label = labelFrom(resolvers);
  let out = csvHeader();
  for (const r of records) out += csvLine(r, label);
  return out;
}

/** The JSON file: an array of rows, one per line. */
export function toJson(records: Iterable<QueryRecord>, resolvers: readonly Pick<ResolverView, 'id' | 'label'>[] | undefined): string {
  const rows: string[] = [];
  const label = labelFrom(resolvers);
  for (const r of records) rows.push(JSON.stringify(exportRow(r, label)));
  return rows.length === 0 ? '[]\n' : `[\n${rows.join(',\n')}\n]\n`;
}
