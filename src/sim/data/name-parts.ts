/**
 * Parts the simulator combines into plausible issue names (Korean with an
 * English rendering), ETF brands and themes, ETN issuers, and trading
 * members. Invented combinations; the parts are ordinary words.
 */

/** Korean name prefixes with their English rendering. */
export const PREFIXES: readonly (readonly [string, string])[] = [
  ['한국', 'KOREA'], ['대한', 'DAEHAN'], ['동양', 'DONGYANG'], ['서울', 'SEOUL'], ['미래', 'MIRAE'],
  ['한빛', 'HANBIT'], ['세진', 'SEJIN'], ['대성', 'DAESUNG'], ['동원', 'DONGWON'], ['삼화', 'SAMHWA'],
  ['유니', 'UNI'], ['에이치', 'H'], ['제이', 'J'], ['케이', 'K'], ['아이', 'I'], ['이노', 'INNO'],
  ['넥스', 'NEX'], ['코리아', 'KOREA'], ['그린', 'GREEN'], ['동방', 'DONGBANG'], ['광명', 'KWANGMYUNG'],
  ['태양', 'TAEYANG'], ['신성', 'SHINSUNG'], ['대영', 'DAEYOUNG'], ['우진', 'WOOJIN'], ['성광', 'SUNGKWANG'],
  ['한일', 'HANIL'], ['대원', 'DAEWON'], ['화승', 'HWASEUNG'], ['금강', 'KUMKANG'], ['백산', 'BAEKSAN'],
  ['영풍', 'YOUNGPOONG'], ['진성', 'JINSUNG'], ['하이', 'HI'], ['엘티', 'LT'], ['에스', 'S'], ['티에스', 'TS'],
  ['비엠', 'BM'], ['씨앤', 'C&'], ['오성', 'OSUNG'], ['동일', 'DONGIL'], ['중앙', 'JOONGANG'], ['새한', 'SAEHAN'],
  ['청담', 'CHEONGDAM'], ['해성', 'HAESUNG'], ['나노', 'NANO'], ['퓨처', 'FUTURE'], ['스마트', 'SMART'],
];

/** Optional middle parts. */
export const MIDDLES: readonly (readonly [string, string])[] = [
  ['', ''], ['', ''], ['', ''], ['글로벌', 'GLOBAL'], ['첨단', 'ADVANCED'], ['정밀', 'PRECISION'],
  ['신소재', 'NEWMATERIALS'], ['디지털', 'DIGITAL'], ['메디', 'MEDI'], ['에코', 'ECO'],
];

/** Korean name suffixes with their English rendering and a preferred industry number. */
export const SUFFIXES: readonly (readonly [string, string, number, number])[] = [
  // [korean, english, KOSPI mid-class, KOSDAQ mid-class]
  ['전자', 'ELECTRONICS', 13, 72], ['화학', 'CHEMICAL', 8, 65], ['제약', 'PHARM', 9, 66], ['바이오', 'BIO', 9, 66],
  ['건설', 'CONSTRUCTION', 18, 26], ['산업', 'INDUSTRIAL', 12, 70], ['테크', 'TECH', 13, 43], ['홀딩스', 'HOLDINGS', 26, 12],
  ['에너지', 'ENERGY', 17, 65], ['소재', 'MATERIALS', 11, 68], ['시스템', 'SYSTEM', 12, 42], ['반도체', 'SEMICON', 13, 43],
  ['솔루션', 'SOLUTION', 26, 42], ['로직스', 'LOGIS', 19, 29], ['엔터', 'ENT', 26, 37], ['푸드', 'FOOD', 5, 56],
  ['물산', 'CORP', 16, 27], ['중공업', 'HEAVY IND', 12, 70], ['증권', 'SECURITIES', 21, 31], ['생명', 'LIFE', 21, 31],
  ['통신', 'TELECOM', 20, 41], ['게임즈', 'GAMES', 26, 37], ['모빌리티', 'MOBILITY', 15, 75], ['디스플레이', 'DISPLAY', 13, 43],
  ['머티리얼즈', 'MATERIALS', 11, 68], ['제지', 'PAPER', 7, 62], ['섬유', 'TEXTILE', 6, 58], ['철강', 'STEEL', 11, 68],
  ['기계', 'MACHINERY', 12, 70], ['메탈', 'METAL', 11, 68], ['의료기', 'MEDICAL', 14, 74], ['유통', 'RETAIL', 16, 27],
  ['미디어', 'MEDIA', 26, 63], ['세라믹', 'CERAMIC', 10, 67], ['오토', 'AUTO', 15, 75], ['해운', 'SHIPPING', 19, 29],
  ['이엔지', 'ENG', 18, 26], ['네트웍스', 'NETWORKS', 20, 41], ['파마', 'PHARMA', 9, 66], ['케미칼', 'CHEMICAL', 8, 65],
];

/** ETF brands (asset managers' series names). */
export const ETF_BRANDS: readonly string[] = [
  'KODEX', 'TIGER', 'KBSTAR', 'ARIRANG', 'HANARO', 'KOSEF', 'ACE', 'SOL', 'TIMEFOLIO', 'PLUS', 'RISE', 'KINDEX', 'WOORI', 'BNK',
];

/** ETF themes: Korean, English. */
export const ETF_THEMES: readonly (readonly [string, string])[] = [
  ['200', '200'], ['코스닥150', 'KOSDAQ150'], ['미국S&P500', 'US S&P500'], ['미국나스닥100', 'US NASDAQ100'],
  ['2차전지산업', 'SECONDARY BATTERY'], ['반도체', 'SEMICONDUCTOR'], ['은행', 'BANKS'], ['헬스케어', 'HEALTHCARE'],
  ['고배당', 'HIGH DIVIDEND'], ['인버스', 'INVERSE'], ['레버리지', 'LEVERAGE'], ['200선물인버스2X', '200 FUTURES INVERSE 2X'],
  ['국고채10년', 'KTB 10Y'], ['단기채권', 'SHORT-TERM BOND'], ['골드선물(H)', 'GOLD FUTURES(H)'], ['WTI원유선물(H)', 'WTI FUTURES(H)'],
  ['차이나CSI300', 'CHINA CSI300'], ['일본니케이225', 'JAPAN NIKKEI225'], ['유로스탁스50(H)', 'EUROSTOXX50(H)'], ['K-게임', 'K-GAME'],
  ['미디어컨텐츠', 'MEDIA CONTENTS'], ['AI반도체', 'AI SEMICONDUCTOR'], ['리츠부동산인프라', 'REITS INFRA'], ['ESG', 'ESG'],
  ['TOP10', 'TOP10'], ['배당성장', 'DIVIDEND GROWTH'], ['200TR', '200TR'], ['중국전기차', 'CHINA EV'], ['미국채30년', 'US TREASURY 30Y'],
  ['CD금리액티브', 'CD RATE ACTIVE'], ['KOFR금리', 'KOFR'], ['미국배당다우존스', 'US DIVIDEND DOW JONES'], ['인도니프티50', 'INDIA NIFTY50'],
  ['베트남VN30', 'VIETNAM VN30'], ['조선', 'SHIPBUILDING'], ['방산', 'DEFENSE'], ['자동차', 'AUTOS'], ['철강', 'STEEL'],
  ['증권', 'SECURITIES'], ['건설', 'CONSTRUCTION'], ['화장품', 'COSMETICS'], ['바이오', 'BIO'], ['로봇', 'ROBOTICS'],
  ['수소경제', 'HYDROGEN'], ['원자력', 'NUCLEAR'], ['K-뷰티', 'K-BEAUTY'], ['K-푸드', 'K-FOOD'], ['클라우드', 'CLOUD'],
  ['메타버스', 'METAVERSE'], ['게임', 'GAMES'], ['미국테크TOP10', 'US TECH TOP10'], ['글로벌리튬', 'GLOBAL LITHIUM'],
  ['200IT', '200 IT'], ['200금융', '200 FINANCIALS'], ['200중소형', '200 MID-SMALL'], ['코스피', 'KOSPI'], ['MSCI Korea', 'MSCI KOREA'],
  ['KRX300', 'KRX300'], ['삼성그룹', 'SAMSUNG GROUP'], ['현대차그룹', 'HYUNDAI GROUP'], ['LG그룹', 'LG GROUP'], ['SK그룹', 'SK GROUP'],
  ['종합채권(AA-이상)액티브', 'AGGREGATE BOND ACTIVE'], ['국고채3년', 'KTB 3Y'], ['통안채', 'MSB'], ['회사채', 'CORPORATE BOND'],
  ['미국달러선물', 'USD FUTURES'], ['엔선물', 'JPY FUTURES'], ['구리실물', 'COPPER'], ['은선물(H)', 'SILVER FUTURES(H)'],
  ['농산물선물(H)', 'AGRICULTURE FUTURES(H)'], ['필라델피아반도체', 'PHLX SEMICONDUCTOR'], ['TSMC밸류체인', 'TSMC VALUE CHAIN'],
  ['전력설비', 'POWER EQUIPMENT'], ['우주항공', 'AEROSPACE'], ['플랫폼', 'PLATFORM'], ['ESG액티브', 'ESG ACTIVE'],
];

/** Variants appended to some ETF names. */
export const ETF_VARIANTS: readonly (readonly [string, string])[] = [
  ['', ''], ['', ''], ['', ''], [' 액티브', ' ACTIVE'], ['(합성)', '(SYNTH)'], [' 레버리지', ' LEVERAGE'], [' 인버스', ' INVERSE'], ['TR', ' TR'],
];

/** ETN issuers: Korean, English. */
export const ETN_ISSUERS: readonly (readonly [string, string])[] = [
  ['신한', 'SHINHAN'], ['삼성', 'SAMSUNG'], ['미래에셋', 'MIRAE'], ['한투', 'KIS'], ['KB', 'KB'], ['NH', 'NH'],
  ['메리츠', 'MERITZ'], ['하나', 'HANA'], ['키움', 'KIWOOM'], ['대신', 'DAISHIN'],
];

/** Korean trading members (brokers) as the trader ranking names them. */
export const MEMBERS: readonly string[] = [
  '키움증권', 'KB증권', 'NH투자증권', '한국증권', '미래에셋증권', '삼성증권', '신한투자증권', '이베스트투자증권',
  '씨티그룹', '제이피모간', '모간스탠리', '메릴린치', '한화투자', '대신증권', '하나증권', '유안타증권', '교보증권',
  '메리츠증권', '신영증권', '골드만삭스', 'CLSA', 'UBS', '맥쿼리', '노무라', '유진투자증권', 'DB금융투자',
];

/** The provider's investor codes (`invstCd`), as payloads send them. */
export const INVESTOR_CODES: readonly string[] = [
  '01', '02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12', '13', '14', '15', '16',
];
