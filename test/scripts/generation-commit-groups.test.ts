import { expect } from 'chai';
import { CommitGroups, type GroupMember, type GroupWriters } from '../../scripts/generate/commit-groups.js';

describe('generate-events: commit groups', () => {
  function writers(log: string[], failing?: string): GroupWriters {
    const member = (name: string): GroupMember => ({
      begin: () => log.push(`${name}:begin`),
      commit: async () => {
        await new Promise((resolve) => setTimeout(resolve, name === 'keys' ? 20 : 0));
        if (name === failing) throw new Error(`${name} failed`);
        log.push(`${name}:commit`);
      },
      rollback: async () => {
        log.push(`${name}:rollback`);
      },
    });
    return { events: member('events'), dataKeys: member('keys') };
  }

  it("opens one group for many actions and commits the data keys before the events, once the keys' commit has finished", async () => {
    const log: string[] = [];
    const groups = new CommitGroups(writers(log), 60_000);
    groups.begin();
    groups.begin();
    await groups.maybeCommit(); // not old enough
    expect(log).to.deep.equal(['keys:begin', 'events:begin']);
    await groups.commit();
    expect(log).to.deep.equal(['keys:begin', 'events:begin', 'keys:commit', 'events:commit']);
    await groups.commit(); // none open
    expect(log).to.have.length(4);
  });

  it('commits a group once it is older than its length, and rolls back an open one', async () => {
    const log: string[] = [];
    const groups = new CommitGroups(writers(log), 0);
    groups.begin();
    await groups.maybeCommit();
    expect(log.slice(2)).to.deep.equal(['keys:commit', 'events:commit']);
    groups.begin();
    await groups.rollback();
    expect(log.slice(4)).to.deep.equal(['keys:begin', 'events:begin', 'keys:rollback', 'events:rollback']);
  });

  it('rolls the events back when the data keys failed to commit', async () => {
    const log: string[] = [];
    const groups = new CommitGroups(writers(log, 'keys'), 60_000);
    groups.begin();
    const failed = await groups.commit().catch((error: unknown) => error);
    expect((failed as Error).message).to.equal('keys failed');
    expect(log).to.deep.equal(['keys:begin', 'events:begin', 'keys:rollback', 'events:rollback']);
  });
});
