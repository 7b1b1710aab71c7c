import { Module } from '@nestjs/common';
import { ActorLabelsModule } from '../auth/actor-labels';
import { ConflictsController } from './conflicts.controller';
import { EditLog } from './edits';
import { HISTORY_CONTROLLERS } from './history.controller';
import { RecordHistoryService } from './history.service';
import { InboxCountsController } from './inbox-counts.controller';
import { RECORDS_CONTROLLERS } from './records.controller';
import { RecordsRepository } from './records.repository';
import { RecordsService } from './records.service';
import { TIMELINE_CONTROLLERS } from './timeline.controller';
import { RecordTimelineService } from './timeline.service';

@Module({
  // Provenance and history name members, keys and connections (ActorLabels).
  imports: [ActorLabelsModule],
  controllers: [
    ...RECORDS_CONTROLLERS,
    ...HISTORY_CONTROLLERS,
    ...TIMELINE_CONTROLLERS,
    ConflictsController,
    InboxCountsController,
  ],
  providers: [RecordsService, RecordsRepository, EditLog, RecordHistoryService, RecordTimelineService],
  exports: [RecordsService, EditLog],
})
export class RecordsModule {}
