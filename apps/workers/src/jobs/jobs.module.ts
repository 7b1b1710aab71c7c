import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { type DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { defaultJobOptions } from '@syncline/jobs';
import type { Queue } from 'bullmq';
import { DeadLetterRepository } from './dead-letter.repository';
import { JobHandlerRegistry } from './job-handler-registry';
import { JOB_MAP_TOKEN, type JobMap } from './job-map';
import { JobQueue, QUEUES_BY_NAME } from './job-queue.service';
import { JobWorkersService } from './job-workers.service';

/**
 * The queues of a job map, their workers and the handler registry. Global, so a module with
 * handlers or producers needs no import (and no cycle): handlers are found by discovery.
 */
@Global()
@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest dynamic module is a class with a static forRoot
export class JobsModule {
  static forRoot(map: JobMap): DynamicModule {
    const queueNames = Object.keys(map.queues);
    return {
      module: JobsModule,
      imports: [
        DiscoveryModule,
        BullModule.registerQueue(
          ...queueNames.map((name) => ({ name, defaultJobOptions: defaultJobOptions(map, name) })),
        ),
      ],
      providers: [
        { provide: JOB_MAP_TOKEN, useValue: map },
        {
          provide: QUEUES_BY_NAME,
          inject: queueNames.map((name) => getQueueToken(name)),
          useFactory: (...queues: Queue[]) =>
            new Map(queueNames.map((name, index) => [name, queues[index]] as const)),
        },
        JobHandlerRegistry,
        JobQueue,
        DeadLetterRepository,
        JobWorkersService,
      ],
      exports: [JOB_MAP_TOKEN, JobQueue],
    };
  }
}
