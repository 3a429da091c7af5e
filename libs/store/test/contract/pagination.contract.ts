import { expect, it } from 'vitest';
import { firstOf, InvalidCursorError, isInvalidCursorError, isStoreError, paginate } from '../../src/index.ts';
import type { Collection, Filter, PageDirection } from '../../src/index.ts';
import type { ContractContext } from './context.ts';

interface Event {
  _id: string;
  tenant: string;
  at: string | null;
  rank: number;
}

/** 23 events of tenant t1 with repeated `at` values (ties), some null, plus noise from t2. */
function fixture(): Event[] {
  const events: Event[] = [];
  for (let index = 0; index < 23; index += 1) {
    const day = index % 4 === 3 ? null : `2024-01-0${1 + (index % 3)}T00:00:00.000Z`;
    events.push({ _id: `e${String(index).padStart(2, '0')}`, tenant: 't1', at: day, rank: index % 5 });
  }
  events.push({ _id: 'x1', tenant: 't2', at: '2024-01-01T00:00:00.000Z', rank: 0 });
  return events;
}

async function walk<T extends { _id: string }>(
  collection: Collection<T>,
  filter: Filter<T>,
  sortField: string,
  direction: PageDirection,
  limit: number,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    const page = await paginate(collection, filter, { sortField, direction, after, limit });
    pages += 1;
    ids.push(...page.items.map((item) => item._id));
    after = page.next_cursor ?? undefined;
    if (pages > 50) throw new Error('pagination does not end');
  } while (after !== undefined);
  return { ids, pages };
}

/** The order the store must produce: sort value (nulls first ascending), then `_id`. */
function expectedOrder(events: Event[], field: 'at' | 'rank', direction: PageDirection): string[] {
  const key = (event: Event) => event[field];
  const sorted = [...events].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    const byValue = x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
    return byValue !== 0 ? byValue : a._id < b._id ? -1 : 1;
  });
  return (direction === 'asc' ? sorted : sorted.reverse()).map((event) => event._id);
}

export function paginationContract(context: ContractContext): void {
  const events = () => context.store().collection<Event>('events');
  const tenantEvents = () => fixture().filter((event) => event.tenant === 't1');

  for (const direction of ['asc', 'desc'] as const) {
    it(`walks every page ${direction} with no gap and no duplicate, ties and nulls included`, async () => {
      await events().insertMany(fixture());
      const { ids, pages } = await walk(events(), { tenant: 't1' }, 'at', direction, 5);
      expect(ids).toEqual(expectedOrder(tenantEvents(), 'at', direction));
      expect(pages).toBe(5);
    });
  }

  for (const [field, direction] of [
    ['at', 'asc'],
    ['at', 'desc'],
    ['rank', 'desc'],
    ['_id', 'asc'],
  ] as const) {
    it(`bounds a page's reading with scan (${field} ${direction}): short and empty pages, every match once, in order`, async () => {
      await events().insertMany(fixture());
      const sparse = { tenant: 't1', rank: 0 };
      const ids: string[] = [];
      const sizes: number[] = [];
      let after: string | undefined;
      do {
        const page = await paginate(events(), sparse, {
          sortField: field,
          direction,
          after,
          limit: 2,
          scan: { filter: { tenant: 't1' }, limit: 4 },
        });
        ids.push(...page.items.map((event) => event._id));
        sizes.push(page.items.length);
        after = page.next_cursor ?? undefined;
        if (sizes.length > 50) throw new Error('pagination does not end');
      } while (after !== undefined);
      const matches = tenantEvents().filter((event) => event.rank === 0);
      expect(ids).toEqual(
        expectedOrder(matches, field === '_id' ? 'rank' : field, direction).sort(
          field === '_id' ? (a, b) => (a < b ? -1 : 1) : () => 0,
        ),
      );
      // 23 documents looked at 4 a page: at least 6 pages, each of at most 2, some holding no match at all.
      expect(sizes.length).toBeGreaterThanOrEqual(6);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(2);
      expect(sizes).toContain(0);
    });
  }

  for (const direction of ['asc', 'desc'] as const) {
    it(`walks every page ${direction} with sortValueAlways, with and without a scan window, ties included`, async () => {
      await events().insertMany(fixture());
      for (const scan of [undefined, { filter: { tenant: 't1' }, limit: 3 }]) {
        for (const filter of [{ tenant: 't1' }, { tenant: 't1', rank: { $in: [1, 4] } }] as Filter<Event>[]) {
          const ids: string[] = [];
          let after: string | undefined;
          let pages = 0;
          do {
            const page = await paginate(events(), filter, {
              sortField: 'rank',
              direction,
              after,
              limit: 2,
              scan,
              sortValueAlways: true,
            });
            ids.push(...page.items.map((event) => event._id));
            after = page.next_cursor ?? undefined;
            if (++pages > 50) throw new Error('pagination does not end');
          } while (after !== undefined);
          const selected = tenantEvents().filter((event) => 'rank' in filter === false || [1, 4].includes(event.rank));
          expect(ids).toEqual(expectedOrder(selected, 'rank', direction));
        }
      }
    });
  }

  it('firstOf keeps the first documents of a set in page order, or nothing when the set is no larger', async () => {
    await events().insertMany(fixture());
    for (const direction of ['asc', 'desc'] as const) {
      const order = expectedOrder(tenantEvents(), 'at', direction);
      const clause = await firstOf(events(), { tenant: 't1' }, { sortField: 'at', direction, limit: 9 });
      if (clause === undefined) throw new Error('23 documents do not fit in 9');
      const kept = await events().find({ $and: [{ tenant: 't1' }, clause] } as Filter<Event>);
      expect(kept.map((event) => event._id).sort()).toEqual(order.slice(0, 9).sort());
    }
    expect(await firstOf(events(), { tenant: 't1' }, { sortField: 'at', direction: 'asc', limit: 23 })).toBeUndefined();
  });

  it('pages on a numeric field and on _id alone', async () => {
    await events().insertMany(fixture());
    expect((await walk(events(), { tenant: 't1' }, 'rank', 'desc', 4)).ids).toEqual(
      expectedOrder(tenantEvents(), 'rank', 'desc'),
    );
    const byId = await walk(events(), { tenant: 't1' }, '_id', 'asc', 7);
    expect(byId.ids).toEqual(
      tenantEvents()
        .map((event) => event._id)
        .sort(),
    );
  });

  it('gives no next cursor on the last page, even when it is full', async () => {
    await events().insertMany(fixture().slice(0, 4));
    const page = await paginate(events(), {}, { sortField: 'at', direction: 'asc', limit: 4 });
    expect(page.items).toHaveLength(4);
    expect(page.next_cursor).toBeNull();
    expect(await paginate(events(), { tenant: 'none' }, { sortField: 'at', direction: 'asc', limit: 4 })).toEqual({
      items: [],
      next_cursor: null,
    });
  });

  it('keeps its place when documents are inserted before the cursor', async () => {
    await events().insertMany(fixture());
    const first = await paginate(events(), { tenant: 't1' }, { sortField: 'rank', direction: 'asc', limit: 10 });
    await events().insertOne({ _id: 'a-early', tenant: 't1', at: null, rank: -1 });
    const second = await paginate(
      events(),
      { tenant: 't1' },
      { sortField: 'rank', direction: 'asc', limit: 100, after: first.next_cursor ?? '' },
    );
    const seen = [...first.items, ...second.items].map((event) => event._id);
    expect(new Set(seen).size).toBe(23);
    expect(seen).not.toContain('a-early');
  });

  it('refuses malformed cursors with an InvalidCursorError', async () => {
    await events().insertMany(fixture());
    const { next_cursor: cursor } = await paginate(events(), {}, { sortField: 'at', direction: 'asc', limit: 3 });
    const bad = [
      'not a cursor!',
      '',
      Buffer.from('hello').toString('base64url'),
      Buffer.from('{"f":"at","d":"asc","v":{"$gt":""},"i":"x"}').toString('base64url'),
      Buffer.from('{"f":"at","d":"asc","v":"x"}').toString('base64url'),
      (cursor ?? '').slice(0, 20),
      'A'.repeat(5000),
    ];
    for (const after of bad) {
      const error = await paginate(events(), {}, { sortField: 'at', direction: 'asc', limit: 3, after }).catch(
        (e: unknown) => e,
      );
      expect(isInvalidCursorError(error), after).toBe(true);
      expect(error).toBeInstanceOf(InvalidCursorError);
    }
  });

  it('refuses a cursor made for another sort field or direction', async () => {
    await events().insertMany(fixture());
    const { next_cursor: cursor } = await paginate(events(), {}, { sortField: 'at', direction: 'asc', limit: 3 });
    for (const options of [
      { sortField: 'rank', direction: 'asc' },
      { sortField: 'at', direction: 'desc' },
    ] as const) {
      const error = await paginate(events(), {}, { ...options, limit: 3, after: cursor ?? '' }).catch(
        (e: unknown) => e,
      );
      expect(isInvalidCursorError(error)).toBe(true);
    }
  });

  it('ends a page by budget before the item that would exceed it, and resumes there', async () => {
    await events().insertMany(fixture());
    // Sizes 1..5 by rank: the walk's pages must each stay within 6 bytes, or hold one item.
    const budget = { maxBytes: 6, sizeOf: (event: Event) => event.rank + 1 };
    const ids: string[] = [];
    let after: string | undefined;
    do {
      const page = await paginate(
        events(),
        { tenant: 't1' },
        { sortField: 'at', direction: 'asc', limit: 4, after, budget },
      );
      const bytes = page.items.reduce((sum, event) => sum + budget.sizeOf(event), 0);
      expect(page.items.length === 1 || bytes <= budget.maxBytes).toBe(true);
      expect(page.items.length).toBeGreaterThan(0);
      ids.push(...page.items.map((event) => event._id));
      after = page.next_cursor ?? undefined;
    } while (after !== undefined);
    expect(ids).toEqual(expectedOrder(tenantEvents(), 'at', 'asc'));
  });

  it('takes the first item of a page even when it alone exceeds the budget', async () => {
    await events().insertMany(fixture().slice(0, 3));
    const budget = { maxBytes: 1, sizeOf: () => 10 };
    const first = await paginate(events(), {}, { sortField: '_id', direction: 'asc', limit: 50, budget });
    expect(first.items.map((event) => event._id)).toEqual(['e00']);
    const second = await paginate(
      events(),
      {},
      {
        sortField: '_id',
        direction: 'asc',
        limit: 50,
        budget,
        after: first.next_cursor ?? '',
      },
    );
    expect(second.items.map((event) => event._id)).toEqual(['e01']);
  });

  it('refuses a budget of no bytes', async () => {
    for (const maxBytes of [0, -1, Number.NaN]) {
      const budget = { maxBytes, sizeOf: () => 1 };
      const error = await paginate(events(), {}, { sortField: 'at', direction: 'asc', limit: 3, budget }).catch(
        (e: unknown) => e,
      );
      expect(isStoreError(error)).toBe(true);
    }
  });

  it('refuses a limit that is not a positive integer', async () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      const error = await paginate(events(), {}, { sortField: 'at', direction: 'asc', limit }).catch((e: unknown) => e);
      expect(isStoreError(error)).toBe(true);
      expect(isInvalidCursorError(error)).toBe(false);
    }
  });
}
