import type { FastifyInstance } from 'fastify';
import { authOf } from './data-plane.hooks';
import { notFoundError, storeErrorToHttp } from './errors';
import { OBJECT_TYPES } from './object-types';

type Params = { vid: string; email: string };

const splitList = (value: string | undefined): string[] => (value ? value.split(';').filter(Boolean) : []);

/**
 * Contacts v1 (legacy, still HubSpot's only way to edit them): a contact's secondary email
 * addresses, the `hs_additional_emails` a merge leaves on the survivor. A secondary address
 * finds its contact (GET by email, upsert by email) and is unique like a primary one, so a new
 * contact cannot take it until it is removed here.
 */
export function registerSecondaryEmailRoutes(api: FastifyInstance): void {
  const answer = (portalId: number, vid: string, emails: string[]) => ({
    portalId,
    vid: Number(vid),
    secondaryEmails: emails,
  });

  api.get<{ Params: { vid: string } }>('/contacts/v1/secondary-email/:vid', async (req) => {
    const { portal } = authOf(req);
    const record = portal.stores.contacts.get(req.params.vid);
    if (!record) throw notFoundError('contact does not exist');
    return answer(portal.portalId, record.id, splitList(record.properties.get('hs_additional_emails')));
  });

  api.delete<{ Params: Params }>('/contacts/v1/secondary-email/:vid/email/:email', async (req) => {
    const { portal } = authOf(req);
    const record = portal.stores.contacts.get(req.params.vid);
    if (!record) throw notFoundError('contact does not exist');
    const email = decodeURIComponent(req.params.email).trim().toLowerCase();
    const emails = splitList(record.properties.get('hs_additional_emails'));
    if (!emails.some((e) => e.toLowerCase() === email))
      throw notFoundError(`${email} is not a secondary email of contact ${record.id}`);
    const left = emails.filter((e) => e.toLowerCase() !== email);
    const updated = portal.update(
      'contacts',
      record.id,
      { hs_additional_emails: left.join(';') },
      portal.integrationSource(),
    );
    if (!updated.ok) throw storeErrorToHttp(OBJECT_TYPES.contacts, updated.error);
    return answer(portal.portalId, record.id, left);
  });
}
