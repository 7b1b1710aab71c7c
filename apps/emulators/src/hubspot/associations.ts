import { OBJECT_TYPES, type ObjectTypeName } from './object-types';

export type AssociationCategory = 'HUBSPOT_DEFINED' | 'USER_DEFINED' | 'INTEGRATOR_DEFINED';

export interface AssociationTypeDef {
  typeId: number;
  category: AssociationCategory;
  from: ObjectTypeName;
  to: ObjectTypeName;
  /** `null` for the unlabelled default, `Primary` for primaries, the user's label otherwise. */
  label: string | null;
  /** The v3 `type` name (`contact_to_company`). */
  name: string;
  inverseTypeId: number;
  primary: boolean;
}

/** [from, to, typeId, inverseTypeId, primaryTypeId?, inversePrimaryTypeId?] as HubSpot documents them. */
const BUILT_IN: readonly [ObjectTypeName, ObjectTypeName, number, number, number?, number?][] = [
  ['contacts', 'companies', 279, 280, 1, 2],
  ['contacts', 'deals', 4, 3],
  ['deals', 'companies', 341, 342, 5, 6],
  ['contacts', 'emails', 197, 198],
  ['contacts', 'meetings', 199, 200],
  ['contacts', 'tasks', 203, 204],
  ['companies', 'emails', 185, 186],
  ['companies', 'meetings', 187, 188],
  ['companies', 'tasks', 191, 192],
  ['deals', 'emails', 209, 210],
  ['deals', 'meetings', 211, 212],
  ['deals', 'tasks', 215, 216],
];

const single = (t: ObjectTypeName) => OBJECT_TYPES[t].singular;

function builtInTypes(): AssociationTypeDef[] {
  const defs: AssociationTypeDef[] = [];
  const add = (
    from: ObjectTypeName,
    to: ObjectTypeName,
    typeId: number,
    inverse: number,
    primary: boolean,
    hasPrimary: boolean,
  ) =>
    defs.push({
      typeId,
      category: 'HUBSPOT_DEFINED',
      from,
      to,
      label: primary ? 'Primary' : null,
      name: `${single(from)}_to_${single(to)}${!primary && hasPrimary ? '_unlabeled' : ''}`,
      inverseTypeId: inverse,
      primary,
    });
  for (const [a, b, ab, ba, pab, pba] of BUILT_IN) {
    const hasPrimary = pab !== undefined && pba !== undefined;
    add(a, b, ab, ba, false, hasPrimary);
    add(b, a, ba, ab, false, hasPrimary);
    if (hasPrimary) {
      add(a, b, pab, pba, true, true);
      add(b, a, pba, pab, true, true);
    }
  }
  return defs;
}

/** Association types of one portal: HubSpot's own plus labels the portal defined. */
export class AssociationTypes {
  private readonly byId = new Map<number, AssociationTypeDef>();
  private nextUserTypeId = 1000;

  constructor() {
    for (const def of builtInTypes()) this.byId.set(def.typeId, def);
  }

  get(typeId: number): AssociationTypeDef | undefined {
    return this.byId.get(typeId);
  }

  between(from: ObjectTypeName, to: ObjectTypeName): AssociationTypeDef[] {
    return [...this.byId.values()].filter((d) => d.from === from && d.to === to);
  }

  /** The unlabelled type that `associations/default` and v3 associations use. */
  defaultType(from: ObjectTypeName, to: ObjectTypeName): AssociationTypeDef | undefined {
    return this.between(from, to).find((d) => d.category === 'HUBSPOT_DEFINED' && !d.primary);
  }

  /** A user-defined label; two type ids, one per direction, as HubSpot allocates them. */
  defineLabel(
    from: ObjectTypeName,
    to: ObjectTypeName,
    label: string,
    name: string,
    inverseLabel?: string,
  ): AssociationTypeDef[] {
    const forward = this.nextUserTypeId++;
    const backward = from === to && !inverseLabel ? forward : this.nextUserTypeId++;
    const make = (typeId: number, f: ObjectTypeName, t: ObjectTypeName, l: string, inverseTypeId: number) => {
      const def: AssociationTypeDef = {
        typeId,
        category: 'USER_DEFINED',
        from: f,
        to: t,
        label: l,
        name,
        inverseTypeId,
        primary: false,
      };
      this.byId.set(typeId, def);
      return def;
    };
    const defs = [make(forward, from, to, label, backward)];
    if (backward !== forward) defs.push(make(backward, to, from, inverseLabel ?? label, forward));
    return defs;
  }

  removeLabel(typeId: number): boolean {
    const def = this.byId.get(typeId);
    if (!def || def.category === 'HUBSPOT_DEFINED') return false;
    this.byId.delete(typeId);
    this.byId.delete(def.inverseTypeId);
    return true;
  }
}

export interface AssociationEdge {
  toId: string;
  typeIds: number[];
}

/** What an add or remove changed, one entry per direction, for associationChange events. */
export interface AssociationDelta {
  from: ObjectTypeName;
  fromId: string;
  to: ObjectTypeName;
  toId: string;
  removed: boolean;
  primary: boolean;
}

/**
 * The association graph of one portal. Every edge is stored both ways, with the inverse
 * type id on the far side, so reading from either end agrees.
 */
export class AssociationGraph {
  /** `${type}:${id}` → to-type → to-id → type ids. */
  private readonly edges = new Map<string, Map<ObjectTypeName, Map<string, Set<number>>>>();

  constructor(private readonly types: AssociationTypes) {}

  list(from: ObjectTypeName, fromId: string, to: ObjectTypeName): AssociationEdge[] {
    const targets = this.edges.get(`${from}:${fromId}`)?.get(to);
    if (!targets) return [];
    return [...targets]
      .map(([toId, ids]) => ({ toId, typeIds: [...ids].sort((a, b) => a - b) }))
      .sort((a, b) => Number(a.toId) - Number(b.toId));
  }

  /** Adds type ids from→to (with the unlabelled default beside any label, as HubSpot does). */
  add(
    from: ObjectTypeName,
    fromId: string,
    to: ObjectTypeName,
    toId: string,
    typeIds: number[],
  ): AssociationDelta[] {
    const defs = typeIds
      .map((id) => this.types.get(id))
      .filter((d): d is AssociationTypeDef => d !== undefined);
    const fallback = this.types.defaultType(from, to);
    if (fallback && !defs.includes(fallback)) defs.push(fallback);
    let added = false;
    let primary = false;
    for (const def of defs) {
      if (def.primary) this.clearOtherPrimaries(def, fromId, toId);
      if (this.put(from, fromId, to, toId, def.typeId)) {
        added = true;
        primary ||= def.primary;
      }
      this.put(to, toId, from, fromId, def.inverseTypeId);
    }
    return added ? this.both(from, fromId, to, toId, false, primary) : [];
  }

  /** Removes the given labels, or every association between the pair when none are given. */
  remove(
    from: ObjectTypeName,
    fromId: string,
    to: ObjectTypeName,
    toId: string,
    typeIds?: number[],
  ): AssociationDelta[] {
    const current = this.edges.get(`${from}:${fromId}`)?.get(to)?.get(toId);
    if (!current || current.size === 0) return [];
    const removing = typeIds ?? [...current];
    let primary = false;
    let changed = false;
    for (const typeId of removing) {
      const def = this.types.get(typeId);
      if (!current.has(typeId)) continue;
      changed = true;
      primary ||= def?.primary ?? false;
      current.delete(typeId);
      if (def) this.edges.get(`${to}:${toId}`)?.get(from)?.get(fromId)?.delete(def.inverseTypeId);
    }
    const gone = current.size === 0;
    if (gone) this.drop(from, fromId, to, toId);
    return changed && (gone || typeIds === undefined) ? this.both(from, fromId, to, toId, true, primary) : [];
  }

  /** After a merge the survivor inherits the merged record's associations. */
  moveAll(type: ObjectTypeName, fromId: string, intoId: string): void {
    const outgoing = this.edges.get(`${type}:${fromId}`);
    if (!outgoing) return;
    for (const [to, targets] of outgoing) {
      for (const [toId, typeIds] of targets) {
        if (to === type && toId === intoId) continue;
        for (const typeId of typeIds) {
          const def = this.types.get(typeId);
          if (!def) continue;
          this.put(type, intoId, to, toId, typeId);
          this.put(to, toId, type, intoId, def.inverseTypeId);
        }
        this.drop(type, fromId, to, toId);
      }
    }
    this.edges.delete(`${type}:${fromId}`);
  }

  private put(
    from: ObjectTypeName,
    fromId: string,
    to: ObjectTypeName,
    toId: string,
    typeId: number,
  ): boolean {
    const key = `${from}:${fromId}`;
    const byType = this.edges.get(key) ?? new Map<ObjectTypeName, Map<string, Set<number>>>();
    this.edges.set(key, byType);
    const targets = byType.get(to) ?? new Map<string, Set<number>>();
    byType.set(to, targets);
    const ids = targets.get(toId) ?? new Set<number>();
    targets.set(toId, ids);
    if (ids.has(typeId)) return false;
    ids.add(typeId);
    return true;
  }

  private drop(from: ObjectTypeName, fromId: string, to: ObjectTypeName, toId: string): void {
    this.edges.get(`${from}:${fromId}`)?.get(to)?.delete(toId);
    this.edges.get(`${to}:${toId}`)?.get(from)?.delete(fromId);
  }

  /**
   * A contact has one primary company and a deal one primary company: a new primary
   * demotes the old one (it stays associated, unlabelled).
   */
  private clearOtherPrimaries(def: AssociationTypeDef, fromId: string, toId: string): void {
    // The "many" side holds the single primary: contact→company (1), deal→company (5).
    const manySide =
      def.to === 'companies'
        ? { type: def.from, id: fromId, typeId: def.typeId, other: def.to, keep: toId }
        : { type: def.to, id: toId, typeId: def.inverseTypeId, other: def.from, keep: fromId };
    const inverse = this.types.get(manySide.typeId)?.inverseTypeId;
    const targets = this.edges.get(`${manySide.type}:${manySide.id}`)?.get(manySide.other);
    for (const [otherId, ids] of targets ?? []) {
      if (otherId === manySide.keep || !ids.delete(manySide.typeId)) continue;
      if (inverse !== undefined)
        this.edges.get(`${manySide.other}:${otherId}`)?.get(manySide.type)?.get(manySide.id)?.delete(inverse);
    }
  }

  private both(
    from: ObjectTypeName,
    fromId: string,
    to: ObjectTypeName,
    toId: string,
    removed: boolean,
    primary: boolean,
  ): AssociationDelta[] {
    return [
      { from, fromId, to, toId, removed, primary },
      { from: to, fromId: toId, to: from, toId: fromId, removed, primary },
    ];
  }
}
