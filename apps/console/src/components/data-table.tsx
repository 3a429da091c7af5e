import type { ReactNode } from 'react';

export interface Column<Row> {
  /** Column header text. */
  readonly header: string;
  readonly render: (row: Row) => ReactNode;
  /** Hidden in a narrow window. @default false */
  readonly secondary?: boolean;
}

export interface DataTableProps<Row> {
  /** Accessible name of the table. */
  readonly caption: string;
  readonly columns: readonly Column<Row>[];
  readonly rows: readonly Row[];
  readonly rowKey: (row: Row) => string;
  /** Shown in place of the rows when there are none. @default 'Nothing yet.' */
  readonly empty?: ReactNode;
}

/** A plain, accessible table (a caption, header cells with scope); scrolls sideways in a narrow window. */
export function DataTable<Row>({ caption, columns, rows, rowKey, empty = 'Nothing yet.' }: DataTableProps<Row>) {
  return (
    <div className="table-wrap">
      <table className="data-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.header} scope="col" className={c.secondary === true ? 'secondary' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="empty">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((c) => (
                  <td key={c.header} className={c.secondary === true ? 'secondary' : undefined}>
                    {c.render(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
