import { Inject, Injectable } from '@nestjs/common';
import { JobClient } from '@syncline/jobs';

/** Adds replay jobs for the workers (`workspace.replay`: its job id is the replay's, so an enqueue twice is one job). */
@Injectable()
export class ReplayQueue {
  constructor(@Inject(JobClient) private readonly jobs: JobClient) {}

  async enqueue(replayId: string): Promise<void> {
    await this.jobs.enqueue('workspace.replay', { replayId });
  }
}
