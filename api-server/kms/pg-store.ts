// DataKeyStore over Postgres (table org_data_keys, migration 002_kms.sql).
import type pg from 'pg'
import { SealError } from './errors.ts'
import type { DataKeyStore, KmsProviderName } from './provider.ts'

type Row = { provider: string; wrapped_key: Buffer }

export class PgDataKeyStore implements DataKeyStore {
  /** `provider` is recorded with each new key and checked on every read. */
  private readonly pool: pg.Pool
  private readonly provider: KmsProviderName
  constructor(
    pool: pg.Pool,
    provider: KmsProviderName,
  ) {
    this.pool = pool
    this.provider = provider
  }

  async get(orgId: string): Promise<Buffer | null> {
    const r = await this.pool.query<Row>('select provider, wrapped_key from org_data_keys where org_id = $1', [orgId])
    return r.rows[0] ? this.check(r.rows[0]) : null
  }

  async putIfAbsent(orgId: string, wrapped: Buffer): Promise<Buffer> {
    // Two statements on purpose: in READ COMMITTED a single "insert ... on conflict do
    // nothing" + select in one statement reads a snapshot taken before a concurrent
    // winner committed and finds no row. A fresh statement sees the winner.
    for (let attempt = 0; attempt < 3; attempt++) {
      const ins = await this.pool.query<Row>(
        `insert into org_data_keys (org_id, provider, wrapped_key) values ($1, $2, $3)
         on conflict (org_id) do nothing returning provider, wrapped_key`,
        [orgId, this.provider, wrapped],
      )
      if (ins.rows[0]) return this.check(ins.rows[0])
      const existing = await this.get(orgId)
      if (existing) return existing
      // The winner's row vanished in between (deleted); try to insert again.
    }
    throw new Error('org data key could not be stored')
  }

  private check(row: Row): Buffer {
    // A key wrapped by another provider cannot be unwrapped here; say so, do not try.
    if (row.provider !== this.provider) throw new SealError('provider_mismatch')
    return row.wrapped_key
  }
}
