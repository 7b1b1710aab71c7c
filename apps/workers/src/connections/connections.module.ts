import { Module } from '@nestjs/common';
import { ConnectionRuntime } from './connection-runtime';
import { IngestLog } from './ingest-log';

/** Opening connections (credentials, budgets, connectors) and the process's ingest log. */
@Module({
  providers: [ConnectionRuntime, IngestLog],
  exports: [ConnectionRuntime, IngestLog],
})
export class ConnectionsModule {}
