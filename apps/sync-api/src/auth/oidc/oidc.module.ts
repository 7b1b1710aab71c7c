import { Module } from '@nestjs/common';
import { KeyringModule } from '../../infra/keyring.module';
import { MembersModule } from '../../members/members.module';
import { SessionsModule } from '../sessions/sessions.module';
import { OidcController } from './oidc.controller';
import { OidcSignInService } from './oidc-sign-in.service';
import { OidcStateRepository } from './oidc-state.repository';

/** Sign-in with an OpenID Connect provider: Google, or any issuer by its URL (OIDC_ISSUER_URL). */
@Module({
  imports: [KeyringModule, MembersModule, SessionsModule],
  controllers: [OidcController],
  providers: [OidcSignInService, OidcStateRepository],
})
export class OidcModule {}
