import { Module } from '@nestjs/common';
import { DryRunProcessor } from './dry-run.processor';
import { DryRunService } from './dry-run.service';

/** Dry-run reports of connections in dry run (the `connection.dry-run` job), stored for the API. */
@Module({ providers: [DryRunService, DryRunProcessor] })
export class DryRunModule {}
