import { Pool } from "pg";
import type { Config } from "./config";

export interface Session {
  id: string;
}

export type SessionId = string;

enum Role { User, Assistant }

export class Store {
  constructor(private pool: Pool) {}
}

export async function openStore(config: Config): Promise<Store> {
  return new Store(new Pool(config));
}

const close = async (s: Store) => {};

function helper(x: number) {
  return x;
}
