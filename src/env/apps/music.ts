import { insert, removeRow, table } from "../db";
import { ApiError, type Db, type Row } from "../types";
import {
  type AppModule,
  defineApp,
  deleteOwnedApi,
  getRow,
  loginApi,
  matchesQuery,
  newestFirst,
  nonEmpty,
  opt,
  owned,
  pick,
  req,
  stampDaysAgo,
} from "./common";

export const GENRES = ["pop", "rock", "jazz", "hip hop", "electronic", "folk"];

/** The catalog: [artist, genre, titles]. Invented names; the order fixes the song ids. */
const CATALOG: [string, string, string[]][] = [
  [
    "Mira Solace",
    "pop",
    ["Golden Hour Love", "Paper Hearts", "Sugar Skyline", "Maybe Tonight", "Glitter Rain"],
  ],
  ["Neon Harbor", "pop", ["Electric Summer", "Call Me Back", "Satellite Eyes", "Velvet Morning"]],
  [
    "Iron Willow",
    "rock",
    ["Broken Compass", "Thunder Road Home", "Rust and Bone", "Wildfire Season"],
  ],
  [
    "The Static Pines",
    "rock",
    ["Highway Ghosts", "Northern Lights Riot", "Cold Engine", "Last Train Out"],
  ],
  [
    "Oscar Bellamy Trio",
    "jazz",
    ["Blue Sunday", "Midnight in Lisbon", "Smoke Rings", "Autumn Waltz"],
  ],
  [
    "Blue Lantern Quartet",
    "jazz",
    ["Late Night Espresso", "Quiet Avenue", "Brass Moon", "Slow Rain Swing"],
  ],
  [
    "MC Driftwood",
    "hip hop",
    ["Concrete Garden", "Hustle Hours", "Rooftop Talks", "Gold Chain Memories"],
  ],
  [
    "Kilo Verse",
    "hip hop",
    ["City Lights Freestyle", "No Days Off", "Echo Chamber", "Paper Planes Up"],
  ],
  ["Pulse Atlas", "electronic", ["Neon Drift", "Binary Sunrise", "Low Orbit", "Chromatic"]],
  [
    "Glasswave",
    "electronic",
    ["Crystal Static", "Afterglow Protocol", "Deep Current", "Night Bus Home"],
  ],
  [
    "Hollow Creek",
    "folk",
    ["River Stones", "Cabin Fever Blues", "Wheat and Willow", "Lantern Hill"],
  ],
  ["June Marlowe", "folk", ["Old Letters", "Harvest Moon Song", "Little Blue House", "Sparrow"]],
];

const SONG_FIELDS = ["song_id", "title", "artist", "genre"];
const songView = (r: Row) => pick({ ...r, song_id: r.id }, SONG_FIELDS);
const DETAIL_FIELDS = [
  "song_id",
  "title",
  "artist",
  "genre",
  "duration_s",
  "play_count",
  "release_year",
];
const LIKED_FIELDS = ["song_id", "title", "artist", "play_count"];
const PLAYLIST_FIELDS = ["playlist_id", "title", "song_count"];
const TRACK_FIELDS = ["song_id", "title", "artist", "duration_s"];

function song(db: Db, id: number): Row {
  return getRow(db, "songs", id, "song");
}

function playlistView(db: Db, p: Row) {
  const ids = p.song_ids as number[];
  return {
    playlist_id: p.id,
    title: p.title as string,
    created_at: p.created_at as string,
    songs: ids.map((id) => pick({ ...song(db, id), song_id: id }, TRACK_FIELDS)),
  };
}

/** Music: a song catalog, the user's liked songs and playlists. */
export const music: AppModule = {
  spec: defineApp("music", "Search songs, like songs, and manage your playlists.", [
    loginApi("music"),
    {
      name: "search_songs",
      description: "Search the song catalog by title or artist; optionally by genre.",
      params: [
        opt("query", "string", "text in the title or artist", ""),
        opt("genre", "string", GENRES.join(", ")),
      ],
      returns: `[{${SONG_FIELDS.join(", ")}}] sorted by title`,
      errors: ["unknown genre"],
      paged: true,
      handler: (ctx, args) => {
        if (args.genre != null && !GENRES.includes(args.genre as string))
          throw new ApiError(`Unknown genre '${args.genre}'. Genres: ${GENRES.join(", ")}.`);
        return table(ctx.db, "songs")
          .filter((r) => matchesQuery(r, args.query, ["title", "artist"]))
          .filter((r) => args.genre == null || r.genre === args.genre)
          .sort((a, b) => {
            const x = a.title as string;
            const y = b.title as string;
            return x < y ? -1 : x > y ? 1 : a.id - b.id;
          })
          .map(songView);
      },
    },
    {
      name: "show_song",
      description: "Show one song, and whether you like it.",
      params: [req("song_id", "integer", "")],
      returns: `{${DETAIL_FIELDS.join(", ")}, liked}`,
      errors: ["song not found"],
      handler: (ctx, args) => {
        const s = song(ctx.db, args.song_id as number);
        const liked = owned(ctx, "liked_songs").some((l) => l.song_id === s.id);
        return { ...pick({ ...s, song_id: s.id }, DETAIL_FIELDS), liked };
      },
    },
    {
      name: "show_liked_songs",
      description: "Songs you liked, most recently liked first.",
      returns: `[{${LIKED_FIELDS.join(", ")}}]`,
      paged: true,
      handler: (ctx) =>
        newestFirst(owned(ctx, "liked_songs"), "liked_at").map((l) =>
          pick({ ...song(ctx.db, l.song_id as number), song_id: l.song_id }, LIKED_FIELDS),
        ),
    },
    {
      name: "like_song",
      description: "Add a song to your liked songs.",
      params: [req("song_id", "integer", "")],
      returns: "a confirmation",
      errors: ["song not found", "song already liked"],
      mutates: true,
      handler: (ctx, args) => {
        const s = song(ctx.db, args.song_id as number);
        if (owned(ctx, "liked_songs").some((l) => l.song_id === s.id))
          throw new ApiError(`You already like song ${s.id}.`);
        insert(ctx.db, "liked_songs", { owner: ctx.user, song_id: s.id, liked_at: ctx.now });
        return `Liked '${s.title}'.`;
      },
    },
    {
      name: "unlike_song",
      description: "Remove a song from your liked songs.",
      params: [req("song_id", "integer", "")],
      returns: "a confirmation",
      errors: ["song not found", "song not liked"],
      mutates: true,
      handler: (ctx, args) => {
        const s = song(ctx.db, args.song_id as number);
        const like = owned(ctx, "liked_songs").find((l) => l.song_id === s.id);
        if (!like) throw new ApiError(`You do not like song ${s.id}.`);
        removeRow(ctx.db, "liked_songs", like.id);
        return `Unliked '${s.title}'.`;
      },
    },
    {
      name: "show_playlists",
      description: "Your playlists, newest first.",
      returns: `[{${PLAYLIST_FIELDS.join(", ")}}]`,
      paged: true,
      handler: (ctx) =>
        newestFirst(owned(ctx, "playlists"), "created_at").map((p) => ({
          playlist_id: p.id,
          title: p.title as string,
          song_count: (p.song_ids as number[]).length,
        })),
    },
    {
      name: "show_playlist",
      description: "Show one of your playlists with its songs, in playlist order.",
      params: [req("playlist_id", "integer", "")],
      returns: `{playlist_id, title, created_at, songs: [{${TRACK_FIELDS.join(", ")}}]}`,
      errors: ["playlist not found"],
      handler: (ctx, args) =>
        playlistView(
          ctx.db,
          getRow(ctx.db, "playlists", args.playlist_id as number, "playlist", ctx.user),
        ),
    },
    {
      name: "create_playlist",
      description: "Create an empty playlist.",
      params: [req("title", "string", "")],
      returns: '{"playlist_id": integer}',
      errors: ["empty title", "you have a playlist with this title"],
      mutates: true,
      handler: (ctx, args) => {
        const title = nonEmpty(args.title, "title");
        if (
          owned(ctx, "playlists").some(
            (p) => (p.title as string).toLowerCase() === title.toLowerCase(),
          )
        )
          throw new ApiError(`You already have a playlist titled '${title}'.`);
        const row = insert(ctx.db, "playlists", {
          owner: ctx.user,
          title,
          song_ids: [],
          created_at: ctx.now,
        });
        return { playlist_id: row.id };
      },
    },
    {
      name: "add_song_to_playlist",
      description: "Add a song to the end of one of your playlists.",
      params: [req("playlist_id", "integer", ""), req("song_id", "integer", "")],
      returns: "a confirmation",
      errors: ["playlist not found", "song not found", "song already in the playlist"],
      mutates: true,
      handler: (ctx, args) => {
        const p = getRow(ctx.db, "playlists", args.playlist_id as number, "playlist", ctx.user);
        const s = song(ctx.db, args.song_id as number);
        const ids = p.song_ids as number[];
        if (ids.includes(s.id)) throw new ApiError(`Song ${s.id} is already in playlist ${p.id}.`);
        p.song_ids = [...ids, s.id];
        return `Added '${s.title}' to '${p.title}'.`;
      },
    },
    {
      name: "remove_song_from_playlist",
      description: "Remove a song from one of your playlists.",
      params: [req("playlist_id", "integer", ""), req("song_id", "integer", "")],
      returns: "a confirmation",
      errors: ["playlist not found", "song not in the playlist"],
      mutates: true,
      handler: (ctx, args) => {
        const p = getRow(ctx.db, "playlists", args.playlist_id as number, "playlist", ctx.user);
        const ids = p.song_ids as number[];
        if (!ids.includes(args.song_id as number))
          throw new ApiError(`Song ${args.song_id} is not in playlist ${p.id}.`);
        p.song_ids = ids.filter((id) => id !== args.song_id);
        return `Removed song ${args.song_id} from '${p.title}'.`;
      },
    },
    deleteOwnedApi(
      "delete_playlist",
      "Delete one of your playlists.",
      "playlists",
      "playlist_id",
      "playlist",
      (r) => `Playlist '${r.title}' deleted.`,
    ),
  ]),
  seed: ({ db, user, today, rng }) => {
    for (const [artist, genre, titles] of CATALOG)
      for (const title of titles)
        insert(db, "songs", {
          title,
          artist,
          genre,
          duration_s: rng.int(140, 340),
          play_count: rng.int(2, 900) * 1000 + rng.int(0, 999),
          release_year: rng.int(1998, 2025),
        });
    const ids = table(db, "songs").map((s) => s.id);
    // Distinct days so that "most recently liked" is unambiguous.
    const likeDays = rng.sample(
      Array.from({ length: 90 }, (_, i) => i + 1),
      12,
    );
    rng.sample(ids, 12).forEach((songId, i) => {
      insert(db, "liked_songs", {
        owner: user.email,
        song_id: songId,
        liked_at: stampDaysAgo(today, rng, likeDays[i] as number, [7, 23]),
      });
    });
    const titles = rng.sample(
      [
        "Morning Run",
        "Deep Focus",
        "Road Trip",
        "Dinner Party",
        "Rainy Day",
        "Throwbacks",
        "Sunday Chill",
      ],
      rng.int(4, 5),
    );
    const planDays = rng.sample(
      Array.from({ length: 200 }, (_, i) => i + 3),
      titles.length,
    );
    titles.forEach((title, i) => {
      insert(db, "playlists", {
        owner: user.email,
        title,
        song_ids: rng.sample(ids, rng.int(3, 8)),
        created_at: stampDaysAgo(today, rng, planDays[i] as number, [8, 22]),
      });
    });
  },
};
