import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { DiscoveryModule, NestFactory } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobHandler } from './job-handler.decorator';
import {
  type DiscoveredJobHandler,
  JobHandlerRegistry,
  JobMapError,
  resolveJobHandlers,
} from './job-handler-registry';
import { JOB_MAP_TOKEN, type JobMap } from './job-map';

const map: JobMap = {
  queues: { maintenance: { attempts: 1, backoffMs: 1 }, pull: { attempts: 1, backoffMs: 1 } },
  jobs: {
    'log.retention': { queue: 'maintenance', schema: z.strictObject({}) },
    'connection.pull': { queue: 'pull', schema: z.strictObject({ connectionId: z.uuid() }) },
  },
};

const handler = (jobName: string, owner = `${jobName}Handler.run`): DiscoveredJobHandler => ({
  jobName,
  owner,
  invoke: async () => undefined,
});

describe('resolveJobHandlers', () => {
  it('pairs every job with its one handler', () => {
    const resolved = resolveJobHandlers(map, [handler('log.retention'), handler('connection.pull')]);
    expect([...resolved.keys()].sort()).toEqual(['connection.pull', 'log.retention']);
  });

  it('refuses a job without a handler, naming the job', () => {
    expect(() => resolveJobHandlers(map, [handler('log.retention')])).toThrow(JobMapError);
    expect(() => resolveJobHandlers(map, [handler('log.retention')])).toThrow(
      /job connection\.pull has no handler/,
    );
  });

  it('refuses a job with two handlers, naming both', () => {
    const twice = [
      handler('log.retention', 'A.run'),
      handler('log.retention', 'B.run'),
      handler('connection.pull'),
    ];
    expect(() => resolveJobHandlers(map, twice)).toThrow(
      /job log\.retention has 2 handlers \(A\.run, B\.run\)/,
    );
  });

  it('refuses a handler for a job the map does not have (a typo would leave a job unhandled)', () => {
    const typo = [handler('log.retention'), handler('connection.pull'), handler('log.retentoin', 'C.run')];
    expect(() => resolveJobHandlers(map, typo)).toThrow(/@JobHandler\('log\.retentoin'\) on C\.run/);
  });

  it('refuses a job on an undeclared queue', () => {
    const bad: JobMap = { queues: {}, jobs: { 'log.retention': map.jobs['log.retention']! } };
    expect(() => resolveJobHandlers(bad, [handler('log.retention')])).toThrow(/queue maintenance/);
  });

  it('lists every problem at once', () => {
    expect(() => resolveJobHandlers(map, [])).toThrow(/log\.retention[\s\S]*connection\.pull/);
  });
});

// The same checks through Nest discovery: a context with no I/O, only the registry.
@Injectable()
class RetentionHandler {
  @JobHandler('log.retention')
  async run(): Promise<string> {
    return 'ran';
  }
}

@Injectable()
class SecondRetentionHandler {
  @JobHandler('log.retention')
  async again(): Promise<void> {}
}

async function boot(jobMap: JobMap, handlers: (new () => object)[]) {
  @Module({
    imports: [DiscoveryModule],
    providers: [{ provide: JOB_MAP_TOKEN, useValue: jobMap }, JobHandlerRegistry, ...handlers],
  })
  class TestModule {}
  return NestFactory.createApplicationContext(TestModule, { logger: false, abortOnError: false });
}

describe('JobHandlerRegistry', () => {
  // The registry under test, not the production map: a map of the one job handled here.
  const retentionOnly: JobMap = {
    queues: { maintenance: map.queues.maintenance! },
    jobs: { 'log.retention': map.jobs['log.retention']! },
  };

  it('finds @JobHandler methods on providers and binds them to their instance', async () => {
    const app = await boot(retentionOnly, [RetentionHandler]);
    try {
      const found = app.get(JobHandlerRegistry).get('log.retention');
      expect(found?.owner).toBe('RetentionHandler.run');
      await expect(
        found?.invoke({}, { queue: 'maintenance', jobName: 'log.retention', jobId: 'x', attempt: 1 }),
      ).resolves.toBe('ran');
    } finally {
      await app.close();
    }
  });

  it('refuses to start when a job in the map has no handler', async () => {
    const extended: JobMap = {
      queues: retentionOnly.queues,
      jobs: { ...retentionOnly.jobs, 'test.orphan': { queue: 'maintenance', schema: z.strictObject({}) } },
    };
    await expect(boot(extended, [RetentionHandler])).rejects.toThrow(/job test\.orphan has no handler/);
  });

  it('refuses to start when a job has two handlers', async () => {
    await expect(boot(retentionOnly, [RetentionHandler, SecondRetentionHandler])).rejects.toThrow(
      /job log\.retention has 2 handlers \(RetentionHandler\.run, SecondRetentionHandler\.again\)/,
    );
  });
});
