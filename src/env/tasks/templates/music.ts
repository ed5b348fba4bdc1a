import { newestFirst } from "../../apps/common";
import { findRow, insert, table } from "../../db";
import type { JsonObject, Row } from "../../types";
import type { World } from "../../world";
import { type Act, type Actor, ScriptError } from "../actor";
import { added } from "../expect";
import type { TaskTemplate } from "../types";
import { ownedRows, stampDaysAgo, variantPick } from "./helpers";

/** Templates centred on the music app: likes, playlists, play counts and durations. */

/** Invented song titles that are not in the seeded catalog. */
const NEW_SONG_TITLES = [
  "Amber Windows",
  "Borrowed Time Again",
  "Candle in the Static",
  "Driftwood Heart",
  "Evening Satellites",
  "Foxglove Avenue",
  "Glass House Parade",
  "Hollow Moonlight",
  "Indigo Stairwell",
  "Jukebox Weather",
  "Kites Over Harbor",
  "Lemon Tree Radio",
];

/** Playlist titles that the seed never uses. */
const NEW_PLAYLIST_TITLES = [
  "Gym Mix",
  "Late Night Drive",
  "Study Session",
  "Summer Vibes",
  "Coffee Shop",
  "Kitchen Dance",
  "Focus Flow",
  "Lazy Sunday",
  "Party Starters",
  "Chill Evening",
];

function titleTaken(world: World, title: string): boolean {
  return ownedRows(world, "playlists").some(
    (p) => (p.title as string).toLowerCase() === title.toLowerCase(),
  );
}

/** A playlist title the user does not have yet, distinct across variants. */
function freshPlaylistTitle(world: World, key: string, variant: number): string {
  const free = NEW_PLAYLIST_TITLES.filter((t) => !titleTaken(world, t));
  return variantPick(world, free, variant, key);
}

/** The catalog song with exactly this title (searching by title, all pages). */
function* songByTitle(a: Actor, token: string, title: string): Act<JsonObject> {
  const found = yield* a.pages("music", "search_songs", { access_token: token, query: title });
  const hit = found.find((s) => String(s.title).toLowerCase() === title.toLowerCase());
  if (!hit) throw new ScriptError(`no song titled ${title}`);
  return hit;
}

/** Like every not-yet-liked song of an artist with 6+ songs (search and liked list both paged). */
export const musicLikeArtist: TaskTemplate = {
  id: "music_like_artist",
  difficulty: 2,
  apps: ["music"],
  build(world, rng, variant) {
    const artists = [...new Set(table(world.db, "songs").map((s) => s.artist as string))];
    const artist = variantPick(world, artists, variant, "music_like_artist");
    const existing = table(world.db, "songs").filter((s) => s.artist === artist);
    const genre = existing[0]?.genre ?? "pop";
    const taken = new Set(table(world.db, "songs").map((s) => s.title as string));
    const titles = rng.sample(
      NEW_SONG_TITLES.filter((t) => !taken.has(t)),
      rng.int(2, 3),
    );
    for (const title of titles)
      insert(world.db, "songs", {
        title,
        artist,
        genre,
        duration_s: rng.int(140, 340),
        play_count: rng.int(2, 900) * 1000 + rng.int(0, 999),
        release_year: rng.int(1998, 2025),
      });
    const likedIds = () => new Set(ownedRows(world, "liked_songs").map((l) => l.song_id as number));
    // Some of the artist's songs are liked already: liking them again is an error.
    for (const s of rng.sample(existing, rng.int(1, 2)))
      if (!likedIds().has(s.id))
        insert(world.db, "liked_songs", {
          owner: world.user.email,
          song_id: s.id,
          liked_at: stampDaysAgo(world, rng, rng.int(1, 90), [7, 22]),
        });
    const liked = likedIds();
    const todo = table(world.db, "songs").filter((s) => s.artist === artist && !liked.has(s.id));
    return {
      instruction: `Like every song by ${artist} on music that I have not liked yet.`,
      params: { artist },
      expect: {
        changes: todo.map((s) =>
          added(
            `liked '${s.title}'`,
            "liked_songs",
            (r) => r.owner === world.user.email && r.song_id === s.id,
          ),
        ),
      },
    };
  },
  *solve(a, p) {
    const artist = (p.artist as string).toLowerCase();
    const token = yield* a.login("music");
    const found = yield* a.pages("music", "search_songs", { access_token: token, query: p.artist });
    const songs = found.filter((s) => String(s.artist).toLowerCase() === artist);
    const liked = yield* a.pages("music", "show_liked_songs", { access_token: token });
    const likedIds = new Set(liked.map((s) => s.song_id));
    for (const s of songs)
      if (!likedIds.has(s.song_id))
        yield* a.call("music", "like_song", { access_token: token, song_id: s.song_id });
    yield* a.finish();
  },
};

/** Create a playlist with two named songs (ids looked up by title, then copied into calls). */
export const musicPlaylistCreate: TaskTemplate = {
  id: "music_playlist_create",
  difficulty: 2,
  apps: ["music"],
  build(world, rng, variant) {
    const title = freshPlaylistTitle(world, "music_playlist_create", variant);
    const [first, second] = rng.sample(table(world.db, "songs"), 2) as [Row, Row];
    const want = [first.id, second.id];
    const songA = first.title as string;
    const songB = second.title as string;
    return {
      instruction: `Create a playlist named '${title}' on music with the songs '${songA}' and '${songB}'.`,
      params: { title, songA, songB },
      expect: {
        changes: [
          added(
            `playlist '${title}' with '${songA}' and '${songB}'`,
            "playlists",
            (r) =>
              r.owner === world.user.email &&
              r.title === title &&
              Array.isArray(r.song_ids) &&
              r.song_ids.length === 2 &&
              want.every((id) => (r.song_ids as number[]).includes(id)),
          ),
        ],
      },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("music");
    const first = yield* songByTitle(a, token, p.songA as string);
    const second = yield* songByTitle(a, token, p.songB as string);
    const created = (yield* a.call("music", "create_playlist", {
      access_token: token,
      title: p.title,
    })) as JsonObject;
    for (const s of [first, second])
      yield* a.call("music", "add_song_to_playlist", {
        access_token: token,
        playlist_id: created.playlist_id ?? null,
        song_id: s.song_id ?? null,
      });
    yield* a.finish();
  },
};

/** The most played of the liked songs: liked list over 3 pages, unique maximum on a later page. */
export const musicTopLiked: TaskTemplate = {
  id: "music_top_liked",
  difficulty: 2,
  apps: ["music"],
  build(world, rng) {
    const songs = table(world.db, "songs");
    const song = (id: number) => findRow(world.db, "songs", (s) => s.id === id) as Row;
    const likedIds = () => new Set(ownedRows(world, "liked_songs").map((l) => l.song_id as number));
    // Older than the seeded likes (at most 90 days), so the list spans 3 pages.
    const extraDays = rng.sample(
      Array.from({ length: 40 }, (_, i) => 91 + i),
      rng.int(2, 4),
    );
    for (const days of extraDays) {
      const free = songs.filter((s) => !likedIds().has(s.id));
      insert(world.db, "liked_songs", {
        owner: world.user.email,
        song_id: rng.pick(free).id,
        liked_at: stampDaysAgo(world, rng, days, [7, 22]),
      });
    }
    const liked = newestFirst(ownedRows(world, "liked_songs"), "liked_at");
    const target = song(rng.pick(liked.slice(5)).song_id as number);
    const others = liked
      .filter((l) => l.song_id !== target.id)
      .map((l) => song(l.song_id as number));
    const top = Math.max(...others.map((s) => s.play_count as number));
    target.play_count = top + rng.int(5, 80) * 1000 + rng.int(0, 999);
    // A song not liked is played even more: "most played overall" is the wrong answer.
    const decoy = rng.pick(songs.filter((s) => !likedIds().has(s.id)));
    decoy.play_count = (target.play_count as number) + rng.int(10, 200) * 1000 + rng.int(0, 999);
    return {
      instruction:
        "Which of my liked songs on music has been played the most? Answer with the title.",
      params: {},
      expect: { changes: [], answer: target.title as string },
    };
  },
  *solve(a) {
    const token = yield* a.login("music");
    const liked = yield* a.pages("music", "show_liked_songs", { access_token: token });
    const best = liked.reduce<JsonObject | null>(
      (b, s) => (b === null || (s.play_count as number) > (b.play_count as number) ? s : b),
      null,
    );
    if (!best) throw new ScriptError("no liked songs");
    yield* a.finish(best.title ?? null);
  },
};

/** Total minutes of a playlist on the second page of playlists: paging, then a sum of durations. */
export const musicPlaylistMinutes: TaskTemplate = {
  id: "music_playlist_minutes",
  difficulty: 3,
  apps: ["music"],
  build(world, rng, variant) {
    const songs = table(world.db, "songs");
    const title = freshPlaylistTitle(world, "music_playlist_minutes", variant);
    const count = rng.int(6, 9);
    let picked = rng.sample(songs, count);
    const total = () => picked.reduce((s, x) => s + (x.duration_s as number), 0);
    // Keep the total well away from half a minute so that rounding is unambiguous.
    while (Math.abs((total() % 60) - 30) <= 10) picked = rng.sample(songs, count);
    // The oldest playlist, behind a newer one: it is on the second page.
    insert(world.db, "playlists", {
      owner: world.user.email,
      title,
      song_ids: picked.map((s) => s.id),
      created_at: stampDaysAgo(world, rng, rng.int(210, 300), [7, 22]),
    });
    const filler = NEW_PLAYLIST_TITLES.filter((t) => t !== title && !titleTaken(world, t));
    insert(world.db, "playlists", {
      owner: world.user.email,
      title: rng.pick(filler),
      song_ids: rng.sample(songs, rng.int(3, 6)).map((s) => s.id),
      created_at: stampDaysAgo(world, rng, rng.int(1, 2), [7, 22]),
    });
    return {
      instruction: `How many minutes long is my music playlist '${title}' in total? Answer with a number rounded to the nearest minute.`,
      params: { title },
      expect: { changes: [], answer: Math.round(total() / 60) },
    };
  },
  *solve(a, p) {
    const title = (p.title as string).toLowerCase();
    const token = yield* a.login("music");
    const lists = yield* a.pages("music", "show_playlists", { access_token: token });
    const hit = lists.find((l) => String(l.title).toLowerCase() === title);
    if (!hit) throw new ScriptError(`no playlist titled ${p.title}`);
    const shown = (yield* a.call("music", "show_playlist", {
      access_token: token,
      playlist_id: hit.playlist_id ?? null,
    })) as JsonObject;
    const tracks = (shown.songs ?? []) as JsonObject[];
    const seconds = tracks.reduce((s, t) => s + (t.duration_s as number), 0);
    yield* a.finish(Math.round(seconds / 60));
  },
};

export const MUSIC_TEMPLATES: TaskTemplate[] = [
  musicLikeArtist,
  musicPlaylistCreate,
  musicTopLiked,
  musicPlaylistMinutes,
];
