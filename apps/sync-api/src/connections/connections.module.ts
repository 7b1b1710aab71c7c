import { Module } from '@nestjs/common';
import { AuditLogModule } from '../admin/audit-log.module';
import { ApiKeysModule } from '../api-keys/api-keys.module';
import { KeyringModule } from '../infra/keyring.module';
import { ConnectionsController } from './connections.controller';
import { ConnectionsRepository } from './connections.repository';
import { ConnectionsService } from './connections.service';
import { OAuthController } from './oauth.controller';
import { OAuthService } from './oauth.service';
import { GoogleOAuthClient } from './oauth-google.client';
import { HubspotOAuthClient } from './oauth-hubspot.client';
import { OAuthStateRepository } from './oauth-state.repository';

@Module({
  // ApiKeys: the OAuth callback checks that the key which started the connect is still active.
  imports: [KeyringModule, AuditLogModule, ApiKeysModule],
  controllers: [ConnectionsController, OAuthController],
  providers: [
    ConnectionsService,
    ConnectionsRepository,
    OAuthService,
    OAuthStateRepository,
    HubspotOAuthClient,
    GoogleOAuthClient,
  ],
})
export class ConnectionsModule {}
