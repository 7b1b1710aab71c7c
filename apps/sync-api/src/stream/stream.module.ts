import { Module } from '@nestjs/common';
import { EntityChangeListener } from './entity-change.listener';
import { StreamController } from './stream.controller';
import { StreamService } from './stream.service';

/** GET /api/v1/stream: the sync stage's change announcements, per workspace, as server-sent events. */
@Module({
  controllers: [StreamController],
  providers: [StreamService, EntityChangeListener],
})
export class StreamModule {}
