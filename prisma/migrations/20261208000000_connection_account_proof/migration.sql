-- A connection's account is proven by its credentials: the provider itself named the account
-- they open (HubSpot's token info or account details, Google's userinfo, or the OAuth consent)
-- and it was the connection's external_account_id. Only a proven connection takes webhooks and
-- pulls: an account id is no secret, so a claim alone must let nothing in.
--
-- Connections made before this are unproven (NULL). Nothing of theirs is assumed: the workers
-- prove each with its stored credentials on its next pull (marking it, or needs_reauth when the
-- credentials open another account), and meanwhile its webhooks are left out (the pull reads
-- from its kept cursor, so they are not lost). New credentials from an admin are proven first.

-- AlterTable
ALTER TABLE "connection" ADD COLUMN     "credentials_verified_at" TIMESTAMPTZ(3),
ADD COLUMN     "credentials_proof" TEXT;
