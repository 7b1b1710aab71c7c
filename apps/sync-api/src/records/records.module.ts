import { Module } from '@nestjs/common';
import { RECORDS_CONTROLLERS } from './records.controller';
import { RecordsRepository } from './records.repository';
import { RecordsService } from './records.service';

@Module({
  controllers: RECORDS_CONTROLLERS,
  providers: [RecordsService, RecordsRepository],
})
export class RecordsModule {}
