import { Module } from '@nestjs/common';
import { ConflictsController } from './conflicts.controller';
import { EditLog } from './edits';
import { RECORDS_CONTROLLERS } from './records.controller';
import { RecordsRepository } from './records.repository';
import { RecordsService } from './records.service';

@Module({
  controllers: [...RECORDS_CONTROLLERS, ConflictsController],
  providers: [RecordsService, RecordsRepository, EditLog],
})
export class RecordsModule {}
