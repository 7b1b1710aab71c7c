import { Module } from '@nestjs/common';
import { ConnectionsModule } from '../connections/connections.module';
import { OutboxSweepScheduler } from './outbox-sweep.scheduler';
import { PushProcessor } from './push.processor';
import { PushService } from './push.service';
import { SyncConsumerService } from './sync-consumer.service';

/** The sync stage (identity, merge, outbox) and writeback (push jobs, sweep). */
@Module({
  imports: [ConnectionsModule],
  providers: [PushService, PushProcessor, SyncConsumerService, OutboxSweepScheduler],
  exports: [PushService, SyncConsumerService],
})
export class SyncModule {}
