import { Module } from '@nestjs/common';
import { ConnectionsModule } from '../connections/connections.module';
import { RenewProcessor } from './renew.processor';
import { RenewScheduler } from './renew.scheduler';
import { RenewService } from './renew.service';

/** `connection.renew`: push notification channels kept alive (and opened by pulls, through RenewService). */
@Module({
  imports: [ConnectionsModule],
  providers: [RenewService, RenewProcessor, RenewScheduler],
  exports: [RenewService],
})
export class RenewModule {}
