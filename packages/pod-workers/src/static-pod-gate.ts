/**
 * Static pods with the same full name never run at once (the kubelet's
 * `waitingToStartStaticPodsByFullname` / `startedStaticPodsByFullname`). UIDs wait in
 * arrival order; the first live one starts once no other UID holds the full name.
 *
 * @module
 * @internal
 */

/** What the gate needs to know about a UID's record. */
export interface StaticPodRecordView {
  /** Termination was requested or completed: it will never start. */
  isTerminationRequestedOrTerminated(uid: string): boolean | undefined;
}

/** The waiting lists and the started UID per full name. */
export class StaticPodGate {
  readonly #waiting = new Map<string, string[]>();
  readonly #started = new Map<string, string>();

  readonly #records: StaticPodRecordView;

  constructor(records: StaticPodRecordView) {
    this.#records = records;
  }

  /** Appends `uid` to the waiting list of `fullname` (when its worker is created). */
  enqueue(fullname: string, uid: string): void {
    const list = this.#waiting.get(fullname);
    if (list) list.push(uid);
    else this.#waiting.set(fullname, [uid]);
  }

  /**
   * Whether `uid` may start now: it already holds `fullname`, or nobody does and it is the
   * first live UID waiting (dead ones are skipped). On success it holds the name.
   */
  tryStart(fullname: string, uid: string): boolean {
    const holder = this.#started.get(fullname);
    if (holder !== undefined) return holder === uid;
    const list = this.#waiting.get(fullname) ?? [];
    let rest = list;
    for (let i = 0; i < list.length; i++) {
      const waitingUid = list[i] as string;
      const dead = this.#records.isTerminationRequestedOrTerminated(waitingUid);
      if (dead === undefined || dead) continue;
      if (waitingUid !== uid) {
        this.#waiting.set(fullname, list.slice(i));
        return false;
      }
      rest = list.slice(i + 1);
      break;
    }
    if (rest.length > 0) this.#waiting.set(fullname, rest);
    else this.#waiting.delete(fullname);
    this.#started.set(fullname, uid);
    return true;
  }

  /** The UID holding `fullname`, if any. */
  startedUid(fullname: string): string | undefined {
    return this.#started.get(fullname);
  }

  /**
   * Releases `fullname` if `uid` holds it. Returns the first live UID waiting for it (to be
   * woken), if any.
   */
  release(fullname: string, uid: string): string | undefined {
    if (this.#started.get(fullname) !== uid) return undefined;
    this.#started.delete(fullname);
    for (const waitingUid of this.#waiting.get(fullname) ?? []) {
      if (this.#records.isTerminationRequestedOrTerminated(waitingUid) === false) return waitingUid;
    }
    return undefined;
  }
}
