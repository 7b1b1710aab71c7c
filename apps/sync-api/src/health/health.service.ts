import { Inject, Injectable } from '@nestjs/common';
import { PrismaClient } from '@syncline/core/db';
import { Redis } from 'ioredis';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';

export type DependencyState = 'ok' | 'down';

export interface Readiness {
  status: 'ok' | 'unavailable';
  checks: { postgres: DependencyState; redis: DependencyState };
}

// A probe answers within this even when a dependency hangs instead of refusing.
const CHECK_TIMEOUT_MS = 1_500;

@Injectable()
export class HealthService {
  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(Redis) private readonly redis: Redis,
    @InjectPinoLogger(HealthService.name) private readonly logger: PinoLogger,
  ) {}

  async readiness(): Promise<Readiness> {
    const [postgres, redis] = await Promise.all([
      this.check('postgres', () => this.prisma.$queryRaw`SELECT 1`),
      this.check('redis', () => this.redis.ping()),
    ]);
    return {
      status: postgres === 'ok' && redis === 'ok' ? 'ok' : 'unavailable',
      checks: { postgres, redis },
    };
  }

  /** The reason is logged, not returned: the probe is unauthenticated. */
  private async check(dependency: string, probe: () => Promise<unknown>): Promise<DependencyState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)),
        CHECK_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([probe(), timeout]);
      return 'ok';
    } catch (error) {
      this.logger.warn({ dependency, err: error }, 'readiness check failed');
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }
}
