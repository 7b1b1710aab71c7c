import { Module } from '@nestjs/common';
import { RecordsModule } from '../records/records.module';
import { IdentityCheckController } from './identity-check.controller';
import {
  IdentityOperationsController,
  MERGE_CONTROLLERS,
  PossibleDuplicatesController,
} from './identity-review.controller';
import { IdentityReviewRepository } from './identity-review.repository';
import { IdentityReviewService } from './identity-review.service';

/** Identity review: possible duplicates, merges and unmerges of records (salespeople and admins). */
@Module({
  imports: [RecordsModule],
  controllers: [
    PossibleDuplicatesController,
    IdentityOperationsController,
    IdentityCheckController,
    ...MERGE_CONTROLLERS,
  ],
  providers: [IdentityReviewService, IdentityReviewRepository],
})
export class IdentityReviewModule {}
