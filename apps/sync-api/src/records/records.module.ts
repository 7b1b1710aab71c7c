import { Module } from '@nestjs/common';
import { ActorLabelsModule } from '../auth/actor-labels';
import { ConflictsController } from './conflicts.controller';
import { EditLog } from './edits';
import { HISTORY_CONTROLLERS } from './history.controller';
import { RecordHistoryService } from './history.service';
import { InboxCountsController } from './inbox-counts.controller';
import { INSIGHTS_CONTROLLERS } from './insights.controller';
import { RecordInsightsService } from './insights.service';
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
    ...INSIGHTS_CONTROLLERS,
  ],
  providers: [
    RecordsService,
    RecordsRepository,
    EditLog,
    RecordHistoryService,
    RecordTimelineService,
    RecordInsightsService,
  ],
  exports: [RecordsService, EditLog],
})
export class RecordsModule {}
