import { Module } from '@nestjs/common';
import { SyncModule } from '../sync/sync.module';
import { ReplayProcessor } from './replay.processor';
import { ReplayService } from './replay.service';

/** Replays of a workspace's derived state from the change log (the `workspace.replay` job). */
@Module({
  imports: [SyncModule],
  providers: [ReplayService, ReplayProcessor],
  exports: [ReplayService],
})
export class ReplayModule {}
