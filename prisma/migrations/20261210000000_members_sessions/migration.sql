-- People who sign in to the web app. The workspace's users become its members: the same
-- rows (api_key.user_id still names them), lowercased emails, a status (an invited person
-- becomes active at their first sign-in) and a removal time (a removed member keeps their
-- row, so history still names them, and may be invited again).
CREATE TYPE "member_status" AS ENUM ('active', 'invited');

ALTER TABLE "app_user" RENAME TO "member";
ALTER TABLE "member" RENAME CONSTRAINT "app_user_pkey" TO "member_pkey";
ALTER TABLE "member" RENAME CONSTRAINT "app_user_workspace_id_fkey" TO "member_workspace_id_fkey";
ALTER INDEX "app_user_workspace_id_email_key" RENAME TO "member_workspace_id_email_key";
UPDATE "member" SET "email" = lower("email");
ALTER TABLE "member" ADD CONSTRAINT "member_email_lower" CHECK ("email" = lower("email"));
ALTER TABLE "member" ADD COLUMN "status" "member_status" NOT NULL DEFAULT 'active';
ALTER TABLE "member" ADD COLUMN "last_sign_in_at" TIMESTAMPTZ(3);
ALTER TABLE "member" ADD COLUMN "removed_at" TIMESTAMPTZ(3);
CREATE INDEX "member_email_idx" ON "member"("email");

-- A signed-in browser. Only a SHA-256 hash of the cookie's opaque id is kept.
CREATE TABLE "user_session" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "member_id" UUID NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "csrf_secret" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "user_session_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "user_session_token_hash_key" ON "user_session"("token_hash");
CREATE INDEX "user_session_workspace_id_member_id_idx" ON "user_session"("workspace_id", "member_id");
ALTER TABLE "user_session" ADD CONSTRAINT "user_session_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "user_session" ADD CONSTRAINT "user_session_member_id_fkey" FOREIGN KEY ("member_id") REFERENCES "member"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A one-time sign-in link, by the SHA-256 hash of its token.
CREATE TABLE "magic_link" (
    "id" UUID NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "workspace_id" UUID NOT NULL,
    "member_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "return_to" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "magic_link_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "magic_link_token_hash_key" ON "magic_link"("token_hash");
CREATE INDEX "magic_link_workspace_id_idx" ON "magic_link"("workspace_id");
ALTER TABLE "magic_link" ADD CONSTRAINT "magic_link_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "magic_link" ADD CONSTRAINT "magic_link_member_id_fkey" FOREIGN KEY ("member_id") REFERENCES "member"("id") ON DELETE CASCADE ON UPDATE CASCADE;
