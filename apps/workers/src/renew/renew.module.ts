import { Module } from '@nestjs/common';
import { ConnectionsModule } from '../connections/connections.module';
import { RenewProcessor } from './renew.processor';
import { RenewScheduler } from './renew.scheduler';
import { RenewService } from './renew.service';

/** `connection.renew`: push notification channels kept alive. */
@Module({
  imports: [ConnectionsModule],
  providers: [RenewService, RenewProcessor, RenewScheduler],
})
export class RenewModule {}
