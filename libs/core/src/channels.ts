/**
 * The PostgreSQL NOTIFY channel on which the sync stage announces every change of the
 * unified view when its transaction commits, as JSON `EntityChanged`; the API streams
 * these to the workspace's open pages.
 */
export const ENTITY_CHANNEL = 'syncline_entity';

export interface EntityChanged {
  workspaceId: string;
  id: string;
  type: string;
  version: number;
}
