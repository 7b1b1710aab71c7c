import { Module } from '@nestjs/common';
import { KeyringModule } from '../infra/keyring.module';
import { MetricsModule } from '../metrics/metrics.module';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

@Module({
  imports: [KeyringModule, MetricsModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhooksRepository],
})
export class WebhooksModule {}
