import { Global, Module } from '@nestjs/common';
import { MetricsServer } from './metrics-server';
import { WorkerMetrics } from './worker-metrics';

/** Global, so any processor can inject WorkerMetrics without importing this module. */
@Global()
@Module({
  providers: [WorkerMetrics, MetricsServer],
  exports: [WorkerMetrics],
})
export class MetricsModule {}
