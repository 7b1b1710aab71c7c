import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { JOB_HANDLER_METADATA, type JobContext } from './job-handler.decorator';
import { JOB_MAP_TOKEN, type JobMap } from './job-map';

/** A method found carrying @JobHandler, bound to its provider instance. */
export interface DiscoveredJobHandler {
  readonly jobName: string;
  /** `Class.method`, for error messages and logs. */
  readonly owner: string;
  readonly invoke: (payload: unknown, context: JobContext) => Promise<unknown>;
}

export class JobMapError extends Error {
  override name = 'JobMapError';
}

/**
 * Pairs every job of the map with exactly one handler, or throws one error listing every
 * problem: a job without a handler, a job with two, a handler for a job the map does not
 * have (a typo would otherwise leave a job unhandled), a job on an undeclared queue.
 */
export function resolveJobHandlers(
  map: JobMap,
  handlers: readonly DiscoveredJobHandler[],
): Map<string, DiscoveredJobHandler> {
  const problems: string[] = [];
  const byJob = new Map<string, DiscoveredJobHandler[]>();
  for (const handler of handlers) {
    if (!Object.hasOwn(map.jobs, handler.jobName)) {
      problems.push(
        `@JobHandler('${handler.jobName}') on ${handler.owner} names a job that is not in the job map`,
      );
      continue;
    }
    byJob.set(handler.jobName, [...(byJob.get(handler.jobName) ?? []), handler]);
  }
  const resolved = new Map<string, DiscoveredJobHandler>();
  for (const [jobName, definition] of Object.entries(map.jobs)) {
    if (!Object.hasOwn(map.queues, definition.queue)) {
      problems.push(`job ${jobName} is on queue ${definition.queue}, which the job map does not declare`);
    }
    const found = byJob.get(jobName) ?? [];
    const [only] = found;
    if (only === undefined) {
      problems.push(`job ${jobName} has no handler: mark one provider method @JobHandler('${jobName}')`);
    } else if (found.length > 1) {
      problems.push(
        `job ${jobName} has ${found.length} handlers (${found.map((h) => h.owner).join(', ')}); keep one`,
      );
    } else {
      resolved.set(jobName, only);
    }
  }
  if (problems.length > 0) {
    throw new JobMapError(`workers refuse to start:\n  ${problems.join('\n  ')}`);
  }
  return resolved;
}

/** Finds @JobHandler methods on every provider at boot and checks them against the map. */
@Injectable()
export class JobHandlerRegistry implements OnModuleInit {
  private handlers = new Map<string, DiscoveredJobHandler>();

  constructor(
    @Inject(JOB_MAP_TOKEN) private readonly map: JobMap,
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    this.handlers = resolveJobHandlers(this.map, this.discover());
  }

  get(jobName: string): DiscoveredJobHandler | undefined {
    return this.handlers.get(jobName);
  }

  private discover(): DiscoveredJobHandler[] {
    const found: DiscoveredJobHandler[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      // Request-scoped providers have no instance at boot; a job handler must be a singleton.
      if (!wrapper.isDependencyTreeStatic() || typeof instance !== 'object' || instance === null) continue;
      const prototype: unknown = Object.getPrototypeOf(instance);
      if (typeof prototype !== 'object' || prototype === null) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method: unknown = Reflect.get(prototype, methodName);
        if (typeof method !== 'function') continue;
        const jobName = this.reflector.get<string | undefined>(JOB_HANDLER_METADATA, method);
        if (jobName === undefined) continue;
        found.push({
          jobName,
          owner: `${instance.constructor.name}.${methodName}`,
          invoke: (payload, context) => Promise.resolve(method.call(instance, payload, context)),
        });
      }
    }
    return found;
  }
}
