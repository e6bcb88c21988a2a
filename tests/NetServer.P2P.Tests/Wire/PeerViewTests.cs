using System;
using System.Collections.Generic;
using System.Linq;
using NetServer.P2P.Client;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using Xunit;

namespace NetServer.P2P.Tests.Wire;

/// <summary>The client's peer list: a snapshot, then deltas one version at a time; held deltas, gaps and the snapshot that heals them.</summary>
public sealed class PeerViewTests
{
    private readonly List<PeerChange> _changes = [];

    [Fact]
    public void Deltas_in_order_change_the_list_one_version_at_a_time()
    {
        var view = new PeerView();
        Assert.False(view.OnSnapshot(Snapshot(5, Id(1), Id(2)), _changes));
        Assert.Equal(2, _changes.Count(c => c.Joined));
        _changes.Clear();

        Assert.False(view.OnJoined(6, Entry(3), _changes));
        Assert.False(view.OnLeft(7, Id(1), _changes));
        Assert.Equal(7, view.Version);
        Assert.Equal([Id(2), Id(3)], view.ToArray().Select(p => p.Id).Order());
        Assert.Equal([(Id(3), true), (Id(1), false)], _changes.Select(c => (c.Peer.Id, c.Joined)));
    }

    [Fact]
    public void A_delta_already_in_the_list_is_dropped()
    {
        var view = new PeerView();
        view.OnSnapshot(Snapshot(5, Id(1)), _changes);
        _changes.Clear();
        Assert.False(view.OnJoined(5, Entry(9), _changes));
        Assert.False(view.OnLeft(3, Id(1), _changes));
        Assert.Empty(_changes);
        Assert.Equal(5, view.Version);
        Assert.Equal(1, view.Count);
    }

    [Fact]
    public void A_gap_asks_for_one_snapshot_and_the_held_deltas_past_it_are_applied_after_it()
    {
        var view = new PeerView();
        view.OnSnapshot(Snapshot(1, Id(1)), _changes);
        _changes.Clear();

        Assert.True(view.OnJoined(3, Entry(3), _changes));   // version 2 never came: a gap
        Assert.False(view.IsSynced);
        Assert.False(view.OnJoined(4, Entry(4), _changes));  // held, no second request
        Assert.Empty(_changes);

        // The snapshot at version 3 holds 2 and 3; the held 4 follows it.
        Assert.False(view.OnSnapshot(Snapshot(3, Id(1), Id(2), Id(3)), _changes));
        Assert.True(view.IsSynced);
        Assert.Equal(4, view.Version);
        Assert.Equal([Id(1), Id(2), Id(3), Id(4)], view.ToArray().Select(p => p.Id).Order());
        Assert.Equal([Id(2), Id(3), Id(4)], _changes.Where(c => c.Joined).Select(c => c.Peer.Id).Order());
        Assert.Equal(0, view.HeldCount);
    }

    [Fact]
    public void A_snapshot_reports_who_left_and_who_joined_against_the_old_list()
    {
        var view = new PeerView();
        view.OnSnapshot(Snapshot(1, Id(1), Id(2)), _changes);
        view.OnJoined(5, Entry(7), _changes); // a gap
        _changes.Clear();

        view.OnSnapshot(Snapshot(6, Id(2), Id(7), Id(8)), _changes);
        Assert.Equal([(Id(1), false)], _changes.Where(c => !c.Joined).Select(c => (c.Peer.Id, c.Joined)));
        Assert.Equal([Id(7), Id(8)], _changes.Where(c => c.Joined).Select(c => c.Peer.Id).Order());
    }

    [Fact]
    public void Deltas_before_the_first_snapshot_are_held_and_those_past_it_applied()
    {
        var view = new PeerView();
        Assert.False(view.OnJoined(2, Entry(2), _changes)); // before the welcome: no request, the welcome brings a snapshot
        Assert.False(view.OnJoined(3, Entry(3), _changes));
        Assert.Empty(_changes);

        Assert.False(view.OnSnapshot(Snapshot(2, Id(1), Id(2)), _changes));
        Assert.Equal(3, view.Version);
        Assert.Equal(3, view.Count);
    }

    [Fact]
    public void A_gap_left_after_a_snapshot_asks_again()
    {
        var view = new PeerView();
        view.OnSnapshot(Snapshot(1), _changes);
        Assert.True(view.OnJoined(5, Entry(5), _changes));
        Assert.True(view.OnSnapshot(Snapshot(3, Id(3)), _changes)); // 4 is still missing before the held 5
        Assert.False(view.IsSynced);
        Assert.Equal(3, view.Version);
        Assert.False(view.OnSnapshot(Snapshot(5, Id(3), Id(5)), _changes));
        Assert.True(view.IsSynced);
    }

    [Fact]
    public void Held_deltas_are_bounded()
    {
        var view = new PeerView();
        for (var v = 2; v < PeerView.MaxHeld + 100; v++)
            view.OnJoined(v, Entry(v), _changes);
        Assert.Equal(PeerView.MaxHeld, view.HeldCount);
    }

    private static Guid Id(int n) => new(n, 0, 0, new byte[8]);

    private static PeerEntry Entry(int n) => new() { Id = GuidBytes.ToArray(Id(n)), Name = $"p{n}" };

    private static SnapshotMessage Snapshot(long version, params Guid[] ids)
    {
        var snapshot = new SnapshotMessage { Version = version };
        foreach (var id in ids)
            snapshot.Peers.Add(new PeerEntry { Id = GuidBytes.ToArray(id), Name = id.ToString() });
        return snapshot;
    }
}
