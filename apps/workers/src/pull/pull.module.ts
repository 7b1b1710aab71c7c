import { Module } from '@nestjs/common';
import { ConnectionsModule } from '../connections/connections.module';
import { RenewModule } from '../renew/renew.module';
import { PullProcessor } from './pull.processor';
import { PullScheduler } from './pull.scheduler';
import { PullService } from './pull.service';

/** `connection.pull` and `connection.pull-all` on the `pull` and `maintenance` queues. */
@Module({
  imports: [ConnectionsModule, RenewModule],
  providers: [PullService, PullProcessor, PullScheduler],
  exports: [PullService],
})
export class PullModule {}
