/**
 * docs/ROOMS.md ("A Unity client") gives Unity games the C# schema classes of the synced state (issue 25): the C#
 * decoder matches them to the server's types field by field, so a field out of place, missing
 * or of another type breaks every Unity client. This compares each class on the page with the
 * room's state on the server (the duel's `DuelState`, its `LightningState` and everything under
 * it), through @colyseus/schema's public `Metadata.getFields`: the index, the name, the wire type
 * and the C# type of every field, and no class or field more or less.
 */
import { readFileSync } from 'node:fs';
import { Metadata } from '@colyseus/schema';
import { expect } from 'chai';
import { DuelState } from '../examples/duel/room.js';

interface Field {
  index: number;
  name: string;
  /** "string", "float64", ..., or "map<Class>", "ref<Class>". */
  wire: string;
  csharp: string;
}

const CSHARP: Record<string, string> = {
  string: 'string',
  float64: 'double',
  uint16: 'ushort',
  boolean: 'bool',
};

/** The classes of the page's C# blocks, by name. */
function documented(): Map<string, Field[]> {
  const doc = readFileSync(new URL('../docs/ROOMS.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/```csharp\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  const classes = new Map<string, Field[]>();
  for (const block of blocks) {
    for (const [, name, body] of block.matchAll(/class (\w+) : Schema \{\n([\s\S]*?)\n\}/g)) {
      const fields: Field[] = [];
      const pattern =
        /\[Type\((\d+), "(\w+)"(?:, typeof\((?:MapSchema<(\w+)>|(\w+))\))?\)\] public ([\w<>]+) (\w+) =/g;
      for (const [, index, kind, mapOf, refOf, csharp, field] of (body as string).matchAll(
        pattern,
      )) {
        const wire =
          kind === 'map' ? `map<${mapOf}>` : kind === 'ref' ? `ref<${refOf}>` : `${kind}`;
        fields.push({
          index: Number(index),
          name: field as string,
          wire,
          csharp: csharp as string,
        });
      }
      classes.set(name as string, fields);
    }
  }
  return classes;
}

type SchemaClass = { name: string };

/** The server's classes from `root` down, by name, as the C# decoder must see them. */
function served(root: SchemaClass): Map<string, Field[]> {
  const classes = new Map<string, Field[]>();
  const visit = (klass: SchemaClass) => {
    if (classes.has(klass.name)) return;
    const fields: Field[] = [];
    classes.set(klass.name, fields);
    const types = Metadata.getFields(klass) as Record<string, unknown>;
    for (const [index, [name, type]] of Object.entries(types).entries()) {
      if (typeof type === 'string') {
        fields.push({ index, name, wire: type, csharp: CSHARP[type] ?? `? ${type}` });
      } else if (typeof type === 'object' && type !== null && 'map' in type) {
        const child = (type as { map: SchemaClass }).map;
        const csharp = `MapSchema<${child.name}>`;
        fields.push({ index, name, wire: `map<${child.name}>`, csharp });
        visit(child);
      } else {
        const child = type as SchemaClass;
        fields.push({ index, name, wire: `ref<${child.name}>`, csharp: child.name });
        visit(child);
      }
    }
  };
  visit(root);
  return classes;
}

describe('docs/ROOMS.md, a Unity client', () => {
  it("gives the C# classes of the duel's state as the server syncs them, field by field", () => {
    const server = served(DuelState as unknown as SchemaClass);
    const page = documented();
    expect([...page.keys()].sort()).to.deep.equal([...server.keys()].sort());
    expect(server.get('LightningState')?.map((f) => f.name)).to.include.members([
      'rewards',
      'entryFees',
      'matches',
    ]);
    for (const [name, fields] of server) {
      expect(page.get(name), `class ${name}`).to.deep.equal(fields);
    }
  });
});
